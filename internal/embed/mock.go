package embed

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
)

// MockVector is the mock provider's vector for text: deterministic (a
// PCG stream seeded by the FNV-1a hash of the text), Gaussian components,
// unit L2 norm. Equal texts give equal vectors in every process.
func MockVector(text string, dim int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	s := h.Sum64()
	r := rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
	v := make([]float32, dim)
	var sum float64
	for i := range v {
		x := r.NormFloat64()
		v[i] = float32(x)
		sum += float64(v[i]) * float64(v[i])
	}
	n := math.Sqrt(sum)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v
}
