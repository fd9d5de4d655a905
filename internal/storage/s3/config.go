package s3

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ErrConfig: the s3:// address or the AWS_* environment is unusable. Nothing
// was sent to any server.
var ErrConfig = errors.New("invalid S3 configuration")

// Config is everything needed to reach one bucket prefix.
type Config struct {
	// Bucket and Prefix locate the store: key k is the object
	// "<Prefix>/<k>" (or "<k>" when Prefix is empty).
	Bucket string
	Prefix string
	// Region of the bucket (AWS_REGION, AWS_DEFAULT_REGION; default us-east-1).
	Region string
	// Endpoint overrides the AWS endpoint, e.g. "http://127.0.0.1:7070"
	// (AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL). Empty = AWS.
	Endpoint string
	// AllowHTTP must be set for a plain-http:// endpoint (AWS_ALLOW_HTTP=true).
	AllowHTTP bool
	// PathStyle addresses the bucket in the path instead of the host name
	// (AWS_S3_FORCE_PATH_STYLE=true). It is implied for endpoints whose host
	// is an IP address or "localhost", where virtual hosts cannot work.
	PathStyle bool
	// Static credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
	// AWS_SESSION_TOKEN). Both key fields are required.
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string

	// MaxAttempts per request, the first included (default 8).
	MaxAttempts int
	// BackoffBase and BackoffMax shape the exponential back-off with full
	// jitter between attempts (defaults 50 ms and 2 s).
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// AttemptTimeout bounds one attempt of a request (default 60 s); the
	// caller's context bounds the whole request.
	AttemptTimeout time.Duration
	// MultipartThreshold: puts of at least this many bytes use a multipart
	// upload (default 64 MiB). PartSize is the part size (default 16 MiB;
	// S3's minimum is 5 MiB).
	MultipartThreshold int64
	PartSize           int64
	// ConfirmMissingOn412: after a 412 to an If-Match PUT, HEAD the key to
	// report ErrNotFound for a missing object. AWS and VersityGW answer 404
	// themselves; gofakes3 answers 412 (tests set this).
	ConfirmMissingOn412 bool
	// ConditionalCopy: the server honours If-None-Match: * on the
	// destination of CopyObject, so Store is a storage.Copier and a branch
	// is created by one server-side copy of its source's ref. A server
	// that ignores the condition would let a copy replace an existing
	// object, so it is on only where known to hold: by default for AWS
	// (no Endpoint), off for other endpoints; OMNIGRAPH_S3_CONDITIONAL_COPY
	// (true/false) overrides. VersityGW v1.8.0 and gofakes3 ignore the
	// condition (TestConditionalCopyServer).
	ConditionalCopy bool
}

// Environment variable names read by ConfigFromEnv.
const (
	EnvAccessKeyID     = "AWS_ACCESS_KEY_ID"
	EnvSecretAccessKey = "AWS_SECRET_ACCESS_KEY"
	EnvSessionToken    = "AWS_SESSION_TOKEN"
	EnvRegion          = "AWS_REGION"
	EnvDefaultRegion   = "AWS_DEFAULT_REGION"
	EnvEndpointS3      = "AWS_ENDPOINT_URL_S3"
	EnvEndpoint        = "AWS_ENDPOINT_URL"
	EnvAllowHTTP       = "AWS_ALLOW_HTTP"
	EnvForcePathStyle  = "AWS_S3_FORCE_PATH_STYLE"
	// EnvConditionalCopy overrides Config.ConditionalCopy's default.
	EnvConditionalCopy = "OMNIGRAPH_S3_CONDITIONAL_COPY"
)

// ParseURI splits "s3://bucket/prefix" into bucket and prefix (without
// slashes at either end). The prefix may be empty.
func ParseURI(uri string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(uri, "s3://")
	if !ok {
		return "", "", fmt.Errorf("%w: %q is not an s3:// address", ErrConfig, uri)
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	prefix = strings.Trim(prefix, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("%w: %q names no bucket (want s3://bucket/prefix)", ErrConfig, uri)
	}
	if strings.ContainsAny(bucket, "?#") || strings.ContainsAny(prefix, "?#") {
		return "", "", fmt.Errorf("%w: %q: query strings and fragments are not part of an s3:// address", ErrConfig, uri)
	}
	if prefix != "" {
		for seg := range strings.SplitSeq(prefix, "/") {
			if seg == "" || seg == "." || seg == ".." {
				return "", "", fmt.Errorf("%w: %q: the prefix has an empty, \".\" or \"..\" segment", ErrConfig, uri)
			}
		}
	}
	return bucket, prefix, nil
}

// ConfigFromEnv builds the Config for uri from environment variables, read
// through getenv (os.Getenv in production).
func ConfigFromEnv(uri string, getenv func(string) string) (Config, error) {
	bucket, prefix, err := ParseURI(uri)
	if err != nil {
		return Config{}, err
	}
	c := Config{
		Bucket:          bucket,
		Prefix:          prefix,
		Region:          firstNonEmpty(getenv(EnvRegion), getenv(EnvDefaultRegion), "us-east-1"),
		Endpoint:        firstNonEmpty(getenv(EnvEndpointS3), getenv(EnvEndpoint)),
		AccessKeyID:     getenv(EnvAccessKeyID),
		SecretAccessKey: getenv(EnvSecretAccessKey),
		SessionToken:    getenv(EnvSessionToken),
	}
	if c.AllowHTTP, err = envBool(getenv, EnvAllowHTTP); err != nil {
		return Config{}, err
	}
	if c.PathStyle, err = envBool(getenv, EnvForcePathStyle); err != nil {
		return Config{}, err
	}
	c.ConditionalCopy = c.Endpoint == ""
	if getenv(EnvConditionalCopy) != "" {
		if c.ConditionalCopy, err = envBool(getenv, EnvConditionalCopy); err != nil {
			return Config{}, err
		}
	}
	return c, c.validate()
}

func (c *Config) validate() error {
	if c.Bucket == "" {
		return fmt.Errorf("%w: no bucket", ErrConfig)
	}
	if c.AccessKeyID == "" || c.SecretAccessKey == "" {
		return fmt.Errorf("%w: s3://%s needs credentials: set %s and %s", ErrConfig, c.Bucket, EnvAccessKeyID, EnvSecretAccessKey)
	}
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return fmt.Errorf("%w: endpoint %q is not an http(s)://host[:port] URL", ErrConfig, c.Endpoint)
		}
		if u.Scheme == "http" && !c.AllowHTTP {
			return fmt.Errorf("%w: endpoint %q is plain HTTP: set %s=true to allow it", ErrConfig, c.Endpoint, EnvAllowHTTP)
		}
		host := u.Hostname()
		if net.ParseIP(host) != nil || host == "localhost" {
			c.PathStyle = true
		}
	}
	return nil
}

func (c *Config) withDefaults() {
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 8
	}
	if c.BackoffBase <= 0 {
		c.BackoffBase = 50 * time.Millisecond
	}
	if c.BackoffMax <= 0 {
		c.BackoffMax = 2 * time.Second
	}
	if c.AttemptTimeout <= 0 {
		c.AttemptTimeout = 60 * time.Second
	}
	if c.PartSize <= 0 {
		c.PartSize = 16 << 20
	}
	if c.MultipartThreshold <= 0 {
		c.MultipartThreshold = 64 << 20
	}
}

// URI is the s3:// address of the store.
func (c *Config) URI() string {
	if c.Prefix == "" {
		return "s3://" + c.Bucket
	}
	return "s3://" + c.Bucket + "/" + c.Prefix
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func envBool(getenv func(string) string, name string) (bool, error) {
	v := getenv(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%w: %s=%q is not true or false", ErrConfig, name, v)
	}
	return b, nil
}
