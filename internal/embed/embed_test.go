package embed

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeServer is a local OpenAI-compatible embeddings endpoint. handle
// decides the status of each request (by its 1-based number); a 200 answers
// with vec(text) for every input.
type fakeServer struct {
	*httptest.Server
	calls atomic.Int64
	last  atomic.Value // embedRequest
	auth  atomic.Value // string
}

func newFake(t *testing.T, handle func(n int64, req embedRequest) (int, any)) *fakeServer {
	t.Helper()
	f := &fakeServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := f.calls.Add(1)
		if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
			http.Error(w, "bad route "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		var req embedRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.last.Store(req)
		f.auth.Store(r.Header.Get("Authorization"))
		status, body := handle(n, req)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(f.Close)
	return f
}

// okBody answers every input with a vector whose first component is the
// input's length (so tests can tell them apart), index order reversed to
// prove the client reorders by index.
func okBody(req embedRequest) any {
	type item struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	var data []item
	for i := len(req.Input) - 1; i >= 0; i-- {
		v := make([]float32, req.Dimensions)
		v[0] = float32(len(req.Input[i]))
		v[1] = 1
		data = append(data, item{i, v})
	}
	return map[string]any{"data": data}
}

func client(t *testing.T, f *fakeServer, mod func(*Config)) *Client {
	t.Helper()
	cfg := Config{Provider: ProviderOpenAICompatible, BaseURL: f.URL + "/v1/", APIKey: "sk-test", Model: "m1",
		RetryBackoff: time.Millisecond, Timeout: 2 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEmbedRequestShapeAndOrder(t *testing.T) {
	f := newFake(t, func(_ int64, req embedRequest) (int, any) { return 200, okBody(req) })
	c := client(t, f, func(c *Config) { c.Batch = 2 })
	vecs, err := c.Embed(context.Background(), []string{"a", "bbb", "cc"}, 4)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.calls.Load(); got != 2 {
		t.Fatalf("%d requests for 3 texts in batches of 2, want 2", got)
	}
	req := f.last.Load().(embedRequest)
	if req.Model != "m1" || req.Dimensions != 4 || len(req.Input) != 1 || req.Input[0] != "cc" {
		t.Fatalf("last request %+v", req)
	}
	if a := f.auth.Load().(string); a != "Bearer sk-test" {
		t.Fatalf("Authorization %q", a)
	}
	for i, want := range []float64{1, 3, 2} {
		v := vecs[i]
		n := math.Hypot(float64(v[0]), float64(v[1]))
		if math.Abs(n-1) > 1e-6 || math.Abs(float64(v[0])/float64(v[1])-want) > 1e-5 {
			t.Errorf("vector %d = %v, want direction (%v,1) with unit norm", i, v, want)
		}
	}
}

func TestEmbedRetries(t *testing.T) {
	cases := []struct {
		name     string
		statuses []int // per request; 200 after the list ends
		attempts int
		wantErr  int // expected final status, 0 = success
		calls    int64
	}{
		{"500 then ok", []int{500}, 4, 0, 2},
		{"429 twice then ok", []int{429, 429}, 4, 0, 3},
		{"400 is not retried", []int{400, 400}, 4, 400, 1},
		{"503 until attempts run out", []int{503, 503, 503}, 3, 503, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, func(n int64, req embedRequest) (int, any) {
				if int(n) <= len(tc.statuses) {
					return tc.statuses[n-1], map[string]any{"error": map[string]string{"message": "nope"}}
				}
				return 200, okBody(req)
			})
			c := client(t, f, func(c *Config) { c.RetryAttempts = tc.attempts })
			_, err := c.Embed(context.Background(), []string{"x"}, 3)
			if got := f.calls.Load(); got != tc.calls {
				t.Errorf("%d requests, want %d", got, tc.calls)
			}
			if tc.wantErr == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var pe *ProviderError
			if !errors.As(err, &pe) || pe.Status != tc.wantErr || pe.Msg != "nope" || pe.Attempts != int(tc.calls) {
				t.Fatalf("err = %#v (%v), want ProviderError status %d after %d attempts", err, err, tc.wantErr, tc.calls)
			}
		})
	}
}

func TestEmbedDeadline(t *testing.T) {
	f := newFake(t, func(int64, embedRequest) (int, any) { return 503, map[string]string{} })
	c := client(t, f, func(c *Config) {
		c.RetryAttempts = 100
		c.RetryBackoff = 20 * time.Millisecond
		c.Deadline = 60 * time.Millisecond
	})
	_, err := c.Embed(context.Background(), []string{"x"}, 3)
	var pe *ProviderError
	if !errors.As(err, &pe) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a ProviderError wrapping the deadline", err)
	}
	if n := f.calls.Load(); n >= 100 {
		t.Fatalf("deadline did not stop the retries (%d calls)", n)
	}
}

func TestEmbedRejectsBadVectors(t *testing.T) {
	cases := []struct {
		name string
		vec  []any
		want string
	}{
		{"all zero", []any{0, 0, 0}, "all components are zero"},
		{"wrong dimension", []any{1, 2}, "has 2 dimensions, want 3"},
		{"huge overflows to inf", []any{1, 2, 1e39}, ""}, // JSON decode of 1e39 into float32 fails
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, func(int64, embedRequest) (int, any) {
				return 200, map[string]any{"data": []any{map[string]any{"index": 0, "embedding": tc.vec}}}
			})
			c := client(t, f, func(c *Config) { c.RetryAttempts = 1 })
			_, err := c.Embed(context.Background(), []string{"x"}, 3)
			if err == nil {
				t.Fatal("bad vector accepted")
			}
			if tc.want != "" {
				var ve *VectorError
				if !errors.As(err, &ve) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want VectorError %q", err, tc.want)
				}
			}
		})
	}
	for _, v := range [][]float32{{float32(math.NaN()), 1}, {float32(math.Inf(1)), 1}} {
		var ve *VectorError
		if err := Normalize(v, 2); !errors.As(err, &ve) {
			t.Errorf("Normalize(%v) = %v, want VectorError", v, err)
		}
	}
}

func TestMockDeterministicUnit(t *testing.T) {
	c, err := New(Config{Provider: ProviderMock})
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Embed(context.Background(), []string{"hello", "world", "hello"}, 16)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, x := range a[0] {
		sum += float64(x) * float64(x)
	}
	if math.Abs(sum-1) > 1e-5 || len(a[0]) != 16 {
		t.Fatalf("mock vector not unit / wrong dim: %v", a[0])
	}
	for i := range a[0] {
		if a[0][i] != a[2][i] {
			t.Fatal("mock not deterministic")
		}
	}
	if a[0][0] == a[1][0] && a[0][1] == a[1][1] {
		t.Fatal("different texts gave the same vector")
	}
	if c.Model() != DefaultOpenRouterModel {
		t.Fatalf("mock model %q", c.Model())
	}
}

func TestFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	cases := []struct {
		name    string
		env     func(string) string
		check   func(t *testing.T, c Config)
		wantErr error
	}{
		{"defaults need a key", env(), nil, ErrNotConfigured},
		{"openrouter key preferred", env(EnvOpenRouterKey, "or", EnvOpenAIKey, "oa"), func(t *testing.T, c Config) {
			if c.APIKey != "or" || c.BaseURL != DefaultOpenRouterBase || c.Model != DefaultOpenRouterModel {
				t.Errorf("%+v", c)
			}
		}, nil},
		{"openai provider", env(EnvProvider, "openai", EnvOpenRouterKey, "or", EnvOpenAIKey, "oa", EnvModel, "text-embedding-3-small"), func(t *testing.T, c Config) {
			if c.APIKey != "oa" || c.BaseURL != DefaultOpenAIBase || c.Model != "text-embedding-3-small" {
				t.Errorf("%+v", c)
			}
		}, nil},
		{"timing knobs", env(EnvProvider, "mock", EnvDeadlineMS, "0", EnvTimeoutMS, "5", EnvRetryAttempts, "2", EnvRetryBackoff, "7"), func(t *testing.T, c Config) {
			if c.Deadline >= 0 || c.Timeout != 5*time.Millisecond || c.RetryAttempts != 2 || c.RetryBackoff != 7*time.Millisecond {
				t.Errorf("%+v", c)
			}
		}, nil},
		{"mock forced over provider", env(EnvProvider, "openai", EnvMock, "true"), func(t *testing.T, c Config) {
			if c.Provider != ProviderMock || c.MockForced != "openai" {
				t.Errorf("%+v", c)
			}
		}, nil},
		{"bad timeout", env(EnvTimeoutMS, "soon"), nil, &ConfigError{}},
		{"bad attempts", env(EnvRetryAttempts, "0"), nil, &ConfigError{}},
		{"unknown provider", env(EnvProvider, "gemini", EnvOpenAIKey, "k"), nil, &ConfigError{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := FromEnv(tc.env)
			var c *Client
			if err == nil {
				c, err = New(cfg)
			}
			switch want := tc.wantErr.(type) {
			case nil:
				if err != nil {
					t.Fatal(err)
				}
				tc.check(t, c.Config())
			case *ConfigError:
				var ce *ConfigError
				if !errors.As(err, &ce) {
					t.Fatalf("err = %v, want ConfigError", err)
				}
				_ = want
			default:
				if !errors.Is(err, want) {
					t.Fatalf("err = %v, want %v", err, want)
				}
			}
		})
	}
}

func TestCheckModel(t *testing.T) {
	c, _ := New(Config{Provider: ProviderMock, Model: "m1"})
	if err := c.CheckModel("Doc", "v", ""); err != nil {
		t.Fatal(err)
	}
	if err := c.CheckModel("Doc", "v", "m1"); err != nil {
		t.Fatal(err)
	}
	var me *ModelMismatchError
	if err := c.CheckModel("Doc", "v", "m2"); !errors.As(err, &me) || me.Recorded != "m2" || me.Got != "m1" {
		t.Fatalf("err = %v", err)
	}
}
