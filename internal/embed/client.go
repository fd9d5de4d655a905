package embed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"time"
)

// Client embeds text with one resolved Config. It is safe for concurrent
// use; build it once per graph handle so connections are reused.
type Client struct {
	cfg  Config
	http *http.Client
	log  *slog.Logger
}

// Option adjusts a Client.
type Option func(*Client)

// WithHTTPClient makes the client send its requests through hc.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// WithLogger sets the logger of embed calls (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *Client) { c.log = l } }

// New resolves cfg and returns its client: ErrNotConfigured (wrapped) when
// a network provider has no key, *ConfigError for a bad setting.
func New(cfg Config, opts ...Option) (*Client, error) {
	r, err := cfg.Resolve()
	if err != nil {
		return nil, err
	}
	c := &Client{cfg: r, log: slog.Default()}
	for _, o := range opts {
		o(c)
	}
	if c.http == nil {
		c.http = &http.Client{}
	}
	if r.MockForced != "" {
		c.log.Warn("embedding provider overridden by the mock provider", "env", EnvMock, "configured", r.MockForced)
	}
	return c, nil
}

// Config returns the resolved configuration (the API key included: do not
// log it).
func (c *Client) Config() Config { return c.cfg }

// Model is the model the client embeds with; @embed(model=…) is compared
// with it.
func (c *Client) Model() string { return c.cfg.Model }

// Provider is the resolved provider name.
func (c *Client) Provider() string { return c.cfg.Provider }

// ModelMismatchError: the property's vectors were recorded as produced by
// Recorded (@embed(model=…)), the query embedder uses Got.
type ModelMismatchError struct {
	Type, Prop string
	Recorded   string
	Got        string
}

func (e *ModelMismatchError) Error() string {
	return fmt.Sprintf("embedding model mismatch: %s.%s was embedded with model %q (@embed), the configured embedder uses %q; set %s to %q or re-embed",
		e.Type, e.Prop, e.Recorded, e.Got, EnvModel, e.Recorded)
}

// CheckModel returns a *ModelMismatchError when recorded is set and differs
// from the client's model.
func (c *Client) CheckModel(typ, prop, recorded string) error {
	if recorded != "" && recorded != c.cfg.Model {
		return &ModelMismatchError{Type: typ, Prop: prop, Recorded: recorded, Got: c.cfg.Model}
	}
	return nil
}

// ProviderError is a failed request to the provider after every attempt.
type ProviderError struct {
	Provider string
	Status   int // HTTP status, 0 for a transport failure
	Msg      string
	Attempts int
	Err      error
}

func (e *ProviderError) Error() string {
	s := fmt.Sprintf("embed: %s provider failed after %d attempt(s)", e.Provider, e.Attempts)
	if e.Status != 0 {
		s += fmt.Sprintf(": HTTP %d", e.Status)
	}
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	return s
}

func (e *ProviderError) Unwrap() error { return e.Err }

// VectorError is a vector the provider returned that cannot be stored:
// wrong dimension, a NaN or Inf component, or all zeros.
type VectorError struct {
	Index  int // position of the text in the call
	Reason string
}

func (e *VectorError) Error() string {
	return fmt.Sprintf("embed: vector %d rejected: %s", e.Index, e.Reason)
}

// Embed returns one unit vector of dimension dim per text, in order. The
// texts go to the provider in batches of Config.Batch; the whole call is
// bounded by Config.Deadline.
func (c *Client) Embed(ctx context.Context, texts []string, dim int) ([][]float32, error) {
	if dim <= 0 {
		return nil, &ConfigError{Setting: "dimension", Msg: fmt.Sprintf("dimension must be positive, got %d", dim)}
	}
	if c.cfg.Deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Deadline)
		defer cancel()
	}
	out := make([][]float32, 0, len(texts))
	for lo := 0; lo < len(texts); lo += c.cfg.Batch {
		batch := texts[lo:min(lo+c.cfg.Batch, len(texts))]
		start := time.Now()
		vecs, attempts, err := c.embedBatch(ctx, batch, dim)
		c.log.Debug("embed", "provider", c.cfg.Provider, "model", c.cfg.Model, "dim", dim,
			"texts", len(batch), "attempts", attempts, "elapsed", time.Since(start), "ok", err == nil)
		if err != nil {
			return nil, err
		}
		for i, v := range vecs {
			if err := Normalize(v, dim); err != nil {
				var ve *VectorError
				if errors.As(err, &ve) {
					ve.Index = lo + i
				}
				return nil, err
			}
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// EmbedOne embeds a single text.
func (c *Client) EmbedOne(ctx context.Context, text string, dim int) ([]float32, error) {
	v, err := c.Embed(ctx, []string{text}, dim)
	if err != nil {
		return nil, err
	}
	return v[0], nil
}

func (c *Client) embedBatch(ctx context.Context, texts []string, dim int) ([][]float32, int, error) {
	if c.cfg.Provider == ProviderMock {
		out := make([][]float32, len(texts))
		for i, t := range texts {
			out[i] = MockVector(t, dim)
		}
		return out, 1, nil
	}
	var last *ProviderError
	for attempt := 1; attempt <= c.cfg.RetryAttempts; attempt++ {
		if attempt > 1 {
			wait := c.cfg.RetryBackoff << (attempt - 2)
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				last.Attempts = attempt - 1
				last.Err = errors.Join(last.Err, ctx.Err())
				return nil, attempt - 1, last
			case <-t.C:
			}
		}
		vecs, perr := c.request(ctx, texts, dim)
		if perr == nil {
			return vecs, attempt, nil
		}
		perr.Attempts = attempt
		last = perr
		if !retryable(perr) || ctx.Err() != nil {
			break
		}
	}
	return nil, last.Attempts, last
}

// retryable: transport failures, timeouts, 429 and 5xx.
func retryable(e *ProviderError) bool {
	return e.Status == 0 || e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// Normalize checks v (length dim, finite, not all zero) and scales it to
// unit L2 norm in place.
func Normalize(v []float32, dim int) error {
	if len(v) != dim {
		return &VectorError{Reason: fmt.Sprintf("has %d dimensions, want %d", len(v), dim)}
	}
	var sum float64
	for i, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return &VectorError{Reason: fmt.Sprintf("component %d is %v", i, x)}
		}
		sum += f * f
	}
	if sum == 0 {
		return &VectorError{Reason: "all components are zero (no direction)"}
	}
	n := math.Sqrt(sum)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return nil
}
