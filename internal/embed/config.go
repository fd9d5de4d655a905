package embed

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Provider names.
const (
	ProviderOpenAICompatible = "openai-compatible"
	ProviderOpenAI           = "openai"
	ProviderMock             = "mock"
)

// Defaults (the reference system's).
const (
	DefaultOpenRouterBase  = "https://openrouter.ai/api/v1"
	DefaultOpenAIBase      = "https://api.openai.com/v1"
	DefaultOpenRouterModel = "openai/text-embedding-3-large"
	DefaultOpenAIModel     = "text-embedding-3-large"
	DefaultDeadline        = 60 * time.Second
	DefaultTimeout         = 30 * time.Second
	DefaultRetryAttempts   = 4
	DefaultRetryBackoff    = 200 * time.Millisecond
	// DefaultBatch is how many texts one request carries.
	DefaultBatch = 64
)

// Environment variables read by FromEnv.
const (
	EnvProvider      = "OMNIGRAPH_EMBED_PROVIDER"
	EnvBaseURL       = "OMNIGRAPH_EMBED_BASE_URL"
	EnvModel         = "OMNIGRAPH_EMBED_MODEL"
	EnvDeadlineMS    = "OMNIGRAPH_EMBED_DEADLINE_MS"
	EnvTimeoutMS     = "OMNIGRAPH_EMBED_TIMEOUT_MS"
	EnvRetryAttempts = "OMNIGRAPH_EMBED_RETRY_ATTEMPTS"
	EnvRetryBackoff  = "OMNIGRAPH_EMBED_RETRY_BACKOFF_MS"
	EnvMock          = "OMNIGRAPH_EMBEDDINGS_MOCK"
	EnvOpenRouterKey = "OPENROUTER_API_KEY"
	EnvOpenAIKey     = "OPENAI_API_KEY"
)

// Config says how to reach an embedding provider. The zero values of the
// optional fields take the defaults above (Resolve fills them in).
type Config struct {
	Provider string // openai-compatible (default), openai, mock
	Model    string
	BaseURL  string
	APIKey   string
	// Deadline bounds one Embed call across all retries (0: DefaultDeadline;
	// negative: unbounded). Timeout bounds one HTTP request.
	Deadline      time.Duration
	Timeout       time.Duration
	RetryAttempts int // total attempts per request (0: default; ≥1)
	RetryBackoff  time.Duration
	Batch         int // texts per request (0: DefaultBatch)
	// MockForced records that OMNIGRAPH_EMBEDDINGS_MOCK overrode another
	// configured provider (New logs a warning).
	MockForced string
}

// ErrNotConfigured means a network provider has no API key: the graph
// cannot embed text until one is set (or the mock provider is chosen).
var ErrNotConfigured = errors.New("embed: no embedding provider is configured")

// ConfigError is an invalid setting (unknown provider, unparsable number).
type ConfigError struct {
	Setting string
	Msg     string
}

func (e *ConfigError) Error() string { return fmt.Sprintf("embed: %s: %s", e.Setting, e.Msg) }

// Resolve returns c with the defaults of its provider filled in, or a
// *ConfigError / ErrNotConfigured.
func (c Config) Resolve() (Config, error) {
	c.Provider = strings.ToLower(strings.TrimSpace(c.Provider))
	if c.Provider == "" {
		c.Provider = ProviderOpenAICompatible
	}
	switch c.Provider {
	case ProviderOpenAICompatible:
		if c.BaseURL == "" {
			c.BaseURL = DefaultOpenRouterBase
		}
		if c.Model == "" {
			c.Model = DefaultOpenRouterModel
		}
	case ProviderOpenAI:
		if c.BaseURL == "" {
			c.BaseURL = DefaultOpenAIBase
		}
		if c.Model == "" {
			c.Model = DefaultOpenAIModel
		}
	case ProviderMock:
		if c.Model == "" {
			c.Model = DefaultOpenRouterModel
		}
	default:
		return c, &ConfigError{Setting: "provider", Msg: fmt.Sprintf("unknown embedding provider %q (want %s, %s or %s)", c.Provider, ProviderOpenAICompatible, ProviderOpenAI, ProviderMock)}
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	if c.Provider != ProviderMock && c.APIKey == "" {
		return c, fmt.Errorf("%w: provider %s needs an API key (%s)", ErrNotConfigured, c.Provider, keyVars(c.Provider))
	}
	if c.Deadline == 0 {
		c.Deadline = DefaultDeadline
	}
	positiveOr(&c.Timeout, DefaultTimeout)
	positiveOr(&c.RetryAttempts, DefaultRetryAttempts)
	positiveOr(&c.RetryBackoff, DefaultRetryBackoff)
	positiveOr(&c.Batch, DefaultBatch)
	return c, nil
}

// positiveOr sets *v to def unless it is positive (unset or nonsense).
func positiveOr[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

func keyVars(provider string) string {
	if provider == ProviderOpenAI {
		return EnvOpenAIKey
	}
	return EnvOpenRouterKey + " or " + EnvOpenAIKey
}

// FromEnv builds a Config from the environment (getenv is os.Getenv in
// production, a map in tests). It does not resolve defaults; a missing key
// surfaces at New, so a graph that never embeds needs no key.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		Provider: getenv(EnvProvider),
		BaseURL:  getenv(EnvBaseURL),
		Model:    getenv(EnvModel),
	}
	switch strings.ToLower(strings.TrimSpace(c.Provider)) {
	case ProviderOpenAI:
		c.APIKey = getenv(EnvOpenAIKey)
	default:
		c.APIKey = getenv(EnvOpenRouterKey)
		if c.APIKey == "" {
			c.APIKey = getenv(EnvOpenAIKey)
		}
	}
	ms := func(name string, allowZero bool, dst *time.Duration) error {
		s := strings.TrimSpace(getenv(name))
		if s == "" {
			return nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 || (n == 0 && !allowZero) {
			return &ConfigError{Setting: name, Msg: fmt.Sprintf("want a positive number of milliseconds, got %q", s)}
		}
		if n == 0 {
			*dst = -1 // unbounded
			return nil
		}
		*dst = time.Duration(n) * time.Millisecond
		return nil
	}
	if err := ms(EnvDeadlineMS, true, &c.Deadline); err != nil {
		return c, err
	}
	if err := ms(EnvTimeoutMS, false, &c.Timeout); err != nil {
		return c, err
	}
	if err := ms(EnvRetryBackoff, false, &c.RetryBackoff); err != nil {
		return c, err
	}
	if s := strings.TrimSpace(getenv(EnvRetryAttempts)); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return c, &ConfigError{Setting: EnvRetryAttempts, Msg: fmt.Sprintf("want an integer ≥ 1, got %q", s)}
		}
		c.RetryAttempts = n
	}
	if truthy(getenv(EnvMock)) {
		if p := strings.ToLower(strings.TrimSpace(c.Provider)); p != "" && p != ProviderMock {
			c.MockForced = p
		}
		c.Provider = ProviderMock
	}
	return c, nil
}

func truthy(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// MockEnv reports whether OMNIGRAPH_EMBEDDINGS_MOCK is truthy, which forces
// the mock provider over any configured one.
func MockEnv(getenv func(string) string) bool { return truthy(getenv(EnvMock)) }
