package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/logging"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// Store is a storage.Store on one S3 bucket prefix. It is safe for
// concurrent use, and any number of processes and machines may share a
// prefix: the conditional puts are the server's, not ours.
type Store struct {
	cfg    Config
	client *awss3.Client
	root   string // "" or "<prefix>/"
	// attempts counts HTTP requests actually sent (retries included).
	attempts atomic.Int64
	// copyRefused: the server answered a CopyObject with 501 (copy.go).
	copyRefused atomic.Bool
}

var _ storage.Store = (*Store)(nil)

// New returns a Store for cfg. It sends no request.
func New(cfg Config) (*Store, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.withDefaults()
	hc := awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.MaxIdleConns = 256
		tr.MaxIdleConnsPerHost = 64
	}).WithDialerOptions(func(d *net.Dialer) { d.Timeout = 5 * time.Second })
	opts := awss3.Options{
		Region:       cfg.Region,
		Credentials:  credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken),
		UsePathStyle: cfg.PathStyle,
		HTTPClient:   hc,
		// Retries are ours (retry.go): we need to know whether an earlier
		// attempt of a conditional put may have been applied.
		Retryer:                    aws.NopRetryer{},
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
		Logger:                     logging.Nop{},
	}
	if cfg.Endpoint != "" {
		opts.BaseEndpoint = aws.String(cfg.Endpoint)
	}
	s := &Store{cfg: cfg, client: awss3.New(opts)}
	if cfg.Prefix != "" {
		s.root = cfg.Prefix + "/"
	}
	return s, nil
}

// Config returns the store's configuration (with defaults filled in).
func (s *Store) Config() Config { return s.cfg }

// URI returns the store's s3:// address.
func (s *Store) URI() string { return s.cfg.URI() }

// Attempts returns the number of HTTP requests sent so far, retries
// included (storage.Counting counts calls; this counts the wire).
func (s *Store) Attempts() int64 { return s.attempts.Load() }

func (s *Store) full(key string) string { return s.root + key }

func keyErr(op storage.Op, key string) error {
	if err := storage.ValidateKey(key); err != nil {
		return &storage.Error{Op: op, Key: key, Err: err}
	}
	return nil
}

func wrap(op storage.Op, key string, err error) error {
	if err == nil {
		return nil
	}
	return &storage.Error{Op: op, Key: key, Err: err}
}

func (s *Store) begin(ctx context.Context, op storage.Op, key string) error {
	if err := keyErr(op, key); err != nil {
		return err
	}
	return wrap(op, key, ctx.Err())
}

// Get implements storage.Store.
func (s *Store) Get(ctx context.Context, key string) ([]byte, storage.Info, error) {
	if err := s.begin(ctx, storage.OpGet, key); err != nil {
		return nil, storage.Info{}, err
	}
	var data []byte
	var info storage.Info
	_, err := s.retry(ctx, 0, func(ctx context.Context) error {
		out, err := s.client.GetObject(ctx, &awss3.GetObjectInput{Bucket: &s.cfg.Bucket, Key: aws.String(s.full(key))})
		if err != nil {
			return err
		}
		if data, err = readBody(out); err != nil {
			return err
		}
		info = storage.Info{Key: key, Size: int64(len(data)), ETag: aws.ToString(out.ETag), ModTime: aws.ToTime(out.LastModified)}
		return nil
	})
	if err != nil {
		return nil, storage.Info{}, wrap(storage.OpGet, key, err)
	}
	return data, info, nil
}

// readBody reads a GET's response body completely and closes it; a short
// body is a transport error (retried), never a short object.
func readBody(out *awss3.GetObjectOutput) ([]byte, error) {
	defer out.Body.Close()
	r, n := out.Body, out.ContentLength
	var buf bytes.Buffer
	if n != nil && *n > 0 {
		buf.Grow(int(*n))
	}
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, err
	}
	if n != nil && int64(buf.Len()) != *n {
		return nil, fmt.Errorf("short body: %d of %d bytes", buf.Len(), *n)
	}
	return buf.Bytes(), nil
}

// GetRange implements storage.Store with a ranged GET. A range at or past
// the end of the object returns no bytes (S3 answers 416, which we map).
func (s *Store) GetRange(ctx context.Context, key string, off, length int64) ([]byte, error) {
	if err := s.begin(ctx, storage.OpGetRange, key); err != nil {
		return nil, err
	}
	if off < 0 || length < 0 {
		return nil, wrap(storage.OpGetRange, key, &storage.RangeError{Off: off, Length: length})
	}
	if length == 0 {
		// No bytes wanted, but a missing key must still fail.
		if _, err := s.Stat(ctx, key); err != nil {
			var se *storage.Error
			if errors.As(err, &se) {
				se.Op = storage.OpGetRange
			}
			return nil, err
		}
		return []byte{}, nil
	}
	var data []byte
	_, err := s.retry(ctx, 0, func(ctx context.Context) error {
		out, err := s.client.GetObject(ctx, &awss3.GetObjectInput{
			Bucket: &s.cfg.Bucket, Key: aws.String(s.full(key)),
			Range: aws.String(fmt.Sprintf("bytes=%d-%d", off, off+length-1)),
		})
		if err != nil {
			if f := classify(ctx, err); f.status == http.StatusRequestedRangeNotSatisfiable {
				data = []byte{}
				return nil
			}
			return err
		}
		data, err = readBody(out)
		return err
	})
	if err != nil {
		return nil, wrap(storage.OpGetRange, key, err)
	}
	return data, nil
}

// Stat implements storage.Store with a HEAD.
func (s *Store) Stat(ctx context.Context, key string) (storage.Info, error) {
	if err := s.begin(ctx, storage.OpStat, key); err != nil {
		return storage.Info{}, err
	}
	var info storage.Info
	_, err := s.retry(ctx, 0, func(ctx context.Context) error {
		out, err := s.client.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &s.cfg.Bucket, Key: aws.String(s.full(key))})
		if err != nil {
			return err
		}
		info = storage.Info{Key: key, Size: aws.ToInt64(out.ContentLength), ETag: aws.ToString(out.ETag), ModTime: aws.ToTime(out.LastModified)}
		return nil
	})
	return info, wrap(storage.OpStat, key, err)
}

// condition of a put.
type condition struct {
	ifNoneMatch bool   // create only
	ifMatch     string // replace only this ETag
}

// Put implements storage.Store.
func (s *Store) Put(ctx context.Context, key string, data []byte) (storage.Info, error) {
	if err := s.begin(ctx, storage.OpPut, key); err != nil {
		return storage.Info{}, err
	}
	info, err := s.put(ctx, key, data, condition{})
	return info, wrap(storage.OpPut, key, err)
}

// PutIfAbsent implements storage.Store with If-None-Match: *.
//
// If an earlier attempt of this request may have reached the server (a
// timeout, a reset connection, a 5xx) and a later one gets 412, the object
// is read back: when it holds exactly our bytes the earlier attempt won and
// the put succeeds.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) (storage.Info, error) {
	if err := s.begin(ctx, storage.OpPutIfAbsent, key); err != nil {
		return storage.Info{}, err
	}
	info, err := s.put(ctx, key, data, condition{ifNoneMatch: true})
	if errors.Is(err, storage.ErrPrecondition) {
		err = storage.ErrExists
	}
	return info, wrap(storage.OpPutIfAbsent, key, err)
}

// PutIfMatch implements storage.Store with If-Match: etag, with the same
// read-back after an ambiguous attempt as PutIfAbsent.
func (s *Store) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (storage.Info, error) {
	if err := s.begin(ctx, storage.OpPutIfMatch, key); err != nil {
		return storage.Info{}, err
	}
	var info storage.Info
	var err error
	if etag == "" {
		// An empty If-Match would be no condition at all.
		err = storage.ErrPrecondition
	} else {
		info, err = s.put(ctx, key, data, condition{ifMatch: etag})
	}
	var shape *keyShapeError
	if errors.As(err, &shape) && shape.parentIsObject {
		err = storage.ErrNotFound // no object can be under an object
	}
	if errors.Is(err, storage.ErrPrecondition) && (etag == "" || s.cfg.ConfirmMissingOn412) {
		if _, serr := s.Stat(ctx, key); errors.Is(serr, storage.ErrNotFound) {
			err = storage.ErrNotFound
		}
	}
	return info, wrap(storage.OpPutIfMatch, key, err)
}

// put sends data with cond, by multipart upload when it is large.
func (s *Store) put(ctx context.Context, key string, data []byte, cond condition) (storage.Info, error) {
	if int64(len(data)) >= s.cfg.MultipartThreshold {
		return s.putMultipart(ctx, key, data, cond)
	}
	var info storage.Info
	ambiguous, err := s.retry(ctx, len(data), func(ctx context.Context) error {
		in := &awss3.PutObjectInput{
			Bucket: &s.cfg.Bucket, Key: aws.String(s.full(key)),
			Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data))),
		}
		setCondition(&in.IfNoneMatch, &in.IfMatch, cond)
		out, err := s.client.PutObject(ctx, in)
		if err != nil {
			return err
		}
		info = storage.Info{Key: key, Size: int64(len(data)), ETag: aws.ToString(out.ETag), ModTime: responseDate(out.ResultMetadata)}
		return nil
	})
	if err != nil && ambiguous && cond != (condition{}) && errors.Is(err, storage.ErrPrecondition) {
		return s.wonEarlier(ctx, key, data, err)
	}
	return info, err
}

func setCondition(ifNoneMatch, ifMatch **string, cond condition) {
	if cond.ifNoneMatch {
		*ifNoneMatch = aws.String("*")
	}
	if cond.ifMatch != "" {
		*ifMatch = aws.String(cond.ifMatch)
	}
}

// wonEarlier decides a 412 that followed an ambiguous attempt: if the object
// now holds exactly data, that attempt won.
func (s *Store) wonEarlier(ctx context.Context, key string, data []byte, preconditionErr error) (storage.Info, error) {
	cur, info, err := s.Get(ctx, key)
	if err == nil && bytes.Equal(cur, data) {
		return info, nil
	}
	return storage.Info{}, preconditionErr
}

// responseDate is the server's Date header of a response (the time the
// object was stored, to the second), or now if it has none.
func responseDate(md middleware.Metadata) time.Time {
	if raw, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response); ok && raw != nil {
		if t, err := http.ParseTime(raw.Header.Get("Date")); err == nil {
			return t
		}
	}
	return time.Now()
}

// List implements storage.Store with ListObjectsV2 pages of 1000 keys and
// StartAfter. Keys outside the storage key rules (written by other tools)
// are skipped.
func (s *Store) List(ctx context.Context, prefix, startAfter string, fn func(storage.Info) error) error {
	if err := storage.ValidatePrefix(prefix); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return wrap(storage.OpList, prefix, err)
	}
	in := &awss3.ListObjectsV2Input{Bucket: &s.cfg.Bucket, Prefix: aws.String(s.full(prefix))}
	if startAfter != "" {
		in.StartAfter = aws.String(s.full(startAfter))
	}
	for {
		var out *awss3.ListObjectsV2Output
		_, err := s.retry(ctx, 0, func(ctx context.Context) error {
			var err error
			out, err = s.client.ListObjectsV2(ctx, in)
			return err
		})
		if err != nil {
			return wrap(storage.OpList, prefix, err)
		}
		for _, o := range out.Contents {
			k, ok := strings.CutPrefix(aws.ToString(o.Key), s.root)
			if !ok || storage.ValidateKey(k) != nil || (startAfter != "" && k <= startAfter) {
				continue
			}
			if err := fn(storage.Info{Key: k, Size: aws.ToInt64(o.Size), ETag: aws.ToString(o.ETag), ModTime: aws.ToTime(o.LastModified)}); err != nil {
				return err
			}
		}
		if !aws.ToBool(out.IsTruncated) || out.NextContinuationToken == nil {
			return nil
		}
		in.ContinuationToken = out.NextContinuationToken
		in.StartAfter = nil
	}
}

// Delete implements storage.Store. S3 answers 204 for a missing key too.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := s.begin(ctx, storage.OpDelete, key); err != nil {
		return err
	}
	_, err := s.retry(ctx, 0, func(ctx context.Context) error {
		_, err := s.client.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: &s.cfg.Bucket, Key: aws.String(s.full(key))})
		return err
	})
	if errors.Is(err, storage.ErrNotFound) {
		err = nil
	}
	return wrap(storage.OpDelete, key, err)
}

// retry runs one request with back-off. attempt gets a context bounded by
// the attempt timeout (longer for big bodies). It returns whether any failed
// attempt may nevertheless have been applied by the server, and the final
// error mapped to the storage sentinels.
func (s *Store) retry(ctx context.Context, bodyBytes int, attempt func(ctx context.Context) error) (ambiguous bool, err error) {
	timeout := s.cfg.AttemptTimeout + time.Duration(bodyBytes/(1<<20))*time.Second
	var last failure
	for n := 1; ; n++ {
		s.attempts.Add(1)
		actx, cancel := context.WithTimeout(ctx, timeout)
		err := attempt(actx)
		cancel()
		if err == nil {
			return ambiguous, nil
		}
		last = classify(ctx, err)
		if last.class != classRetry && last.class != classThrottle {
			return ambiguous, s.finalError(ctx, last, n)
		}
		// The server may have applied a request whose answer we lost.
		ambiguous = true
		if n >= s.cfg.MaxAttempts {
			return ambiguous, s.finalError(ctx, last, n)
		}
		wait := s.cfg.BackoffBase << min(n-1, 16)
		wait = min(wait, s.cfg.BackoffMax)
		wait = time.Duration(rand.Int64N(int64(wait)) + 1)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ambiguous, ctx.Err()
		case <-t.C:
		}
	}
}
