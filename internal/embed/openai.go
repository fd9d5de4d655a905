package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

type embedRequest struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type embedResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// request sends one POST {base}/embeddings and decodes the vectors in
// input order.
func (c *Client) request(ctx context.Context, texts []string, dim int) ([][]float32, *ProviderError) {
	fail := func(status int, msg string, err error) *ProviderError {
		return &ProviderError{Provider: c.cfg.Provider, Status: status, Msg: msg, Err: err}
	}
	body, err := json.Marshal(embedRequest{Model: c.cfg.Model, Input: texts, Dimensions: dim})
	if err != nil {
		return nil, fail(0, "encode request", err)
	}
	rctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, c.cfg.BaseURL+"/embeddings", bytes.NewReader(body))
	if err != nil {
		return nil, fail(0, "build request", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fail(0, "request failed", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fail(0, "read response", err)
	}
	var er embedResponse
	jerr := json.Unmarshal(raw, &er)
	if resp.StatusCode/100 != 2 {
		msg := strings.TrimSpace(string(raw))
		if jerr == nil && er.Error != nil {
			msg = er.Error.Message
		}
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		return nil, fail(resp.StatusCode, msg, nil)
	}
	if jerr != nil {
		return nil, fail(resp.StatusCode, "undecodable response", jerr)
	}
	if len(er.Data) != len(texts) {
		return nil, fail(resp.StatusCode, fmt.Sprintf("response has %d embeddings for %d inputs", len(er.Data), len(texts)), nil)
	}
	out := make([][]float32, len(texts))
	for i, d := range er.Data {
		idx := d.Index
		if idx < 0 || idx >= len(texts) || out[idx] != nil {
			// Providers that omit index return data in input order.
			idx = i
		}
		if out[idx] != nil {
			return nil, fail(resp.StatusCode, "response repeats an embedding index", nil)
		}
		out[idx] = d.Embedding
	}
	return out, nil
}
