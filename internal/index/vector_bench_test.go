package index

import (
	"math/rand/v2"
	"testing"
	"time"
)

func floorDist(v, q []float32) float32 {
	var s0, s1, s2, s3 float32
	for j := 0; j < len(q); j += 4 {
		d0, d1, d2, d3 := v[j]-q[j], v[j+1]-q[j+1], v[j+2]-q[j+2], v[j+3]-q[j+3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	return s0 + s1 + s2 + s3
}

// BenchmarkSquaredL2 compares the kernel with the 4-way loop of the
// brute-force floor over 10k × 128 (x-floor = kernel ÷ floor, same run).
func BenchmarkSquaredL2(b *testing.B) {
	const n, dim = 10000, 128
	r := rand.New(rand.NewPCG(1, 1))
	vecs := make([]float32, n*dim)
	for i := range vecs {
		vecs[i] = float32(r.NormFloat64())
	}
	q := vecs[:dim]
	var sink float32
	var ours, base time.Duration
	for b.Loop() {
		t0 := time.Now()
		for i := range n {
			sink += SquaredL2(q, vecs[i*dim:(i+1)*dim])
		}
		t1 := time.Now()
		for i := range n {
			sink += floorDist(vecs[i*dim:(i+1)*dim], q)
		}
		ours, base = ours+t1.Sub(t0), base+time.Since(t1)
	}
	b.ReportMetric(float64(ours)/float64(base), "x-floor")
	_ = sink
}

// BenchmarkScanWithin: a top-10 scan over clustered 50k × 128 with the
// early-abandoning kernel, against the full kernel (x-full, same run).
func BenchmarkScanWithin(b *testing.B) {
	const n, dim = 50000, 128
	r := rand.New(rand.NewPCG(1, 1))
	cent := make([]float32, 256*dim)
	for i := range cent {
		cent[i] = float32(r.NormFloat64())
	}
	vecs := make([]float32, n*dim)
	for i := range n {
		c := r.IntN(256)
		for k := range dim {
			vecs[i*dim+k] = cent[c*dim+k] + 0.3*float32(r.NormFloat64())
		}
	}
	q := make([]float32, dim)
	for k := range q {
		q[k] = vecs[7*dim+k] + 0.1*float32(r.NormFloat64())
	}
	scan := func(within bool) float32 {
		best := make([]float32, 10)
		for i := range best {
			best[i] = 3.4e38
		}
		for i := range n {
			v := vecs[i*dim : (i+1)*dim]
			var d float32
			if within {
				d = SquaredL2Within(q, v, best[9])
			} else {
				d = SquaredL2(q, v)
			}
			if d < best[9] {
				j := 9
				for j > 0 && best[j-1] > d {
					best[j] = best[j-1]
					j--
				}
				best[j] = d
			}
		}
		return best[0]
	}
	var ours, full time.Duration
	for b.Loop() {
		t0 := time.Now()
		a := scan(true)
		t1 := time.Now()
		c := scan(false)
		ours, full = ours+t1.Sub(t0), full+time.Since(t1)
		if a > c*1.0001 || c > a*1.0001 {
			b.Fatalf("within %v, full %v", a, c)
		}
	}
	b.ReportMetric(float64(ours)/float64(full), "x-full")
}
