// Package embed turns text into vectors through one provider-independent
// client (spec/languages.md §5.7, docs/search.md "Embeddings").
//
//   - config.go: Config (provider, model, base URL, key, deadlines,
//     retries), FromEnv reading the OMNIGRAPH_EMBED_* variables, defaults.
//   - client.go: Client.Embed — batching, the per-call deadline, retries
//     with exponential back-off, and the vector checks every provider's
//     output goes through (finite, not all zero, L2-normalised).
//   - openai.go: the OpenAI-compatible wire format (POST {base}/embeddings,
//     bearer key, {model, input, dimensions}), used by "openai-compatible"
//     (OpenRouter by default) and "openai".
//   - mock.go: the deterministic offline provider.
//
// Guarantees: every vector a Client returns has exactly the requested
// dimension, finite components and unit L2 norm; NaN/Inf, all-zero and
// mis-sized vectors are *VectorError, never returned. A Client is safe for
// concurrent use and keeps its HTTP connections for reuse. Every failure is
// typed: ErrNotConfigured (no key for a network provider), *ConfigError,
// *ProviderError (HTTP status, attempts), *VectorError, *ModelMismatchError.
//
// Caveats: the mock provider's vectors depend only on the text and the
// dimension; they are unit vectors with no semantic meaning, good for tests
// and offline runs of queries that embed strings, not for relevance.
package embed
