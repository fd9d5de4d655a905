package s3

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

var _ storage.Copier = (*Store)(nil)

// CopiesIfAbsent implements storage.Copier: when Config.ConditionalCopy is
// set and the server has not answered a copy with 501 Not Implemented.
func (s *Store) CopiesIfAbsent() bool { return s.cfg.ConditionalCopy && !s.copyRefused.Load() }

// CopyIfAbsent implements storage.Copier with CopyObject and If-None-Match: *
// on the destination: the server reads the source and creates the
// destination in one request. The returned Info has Key, ETag and ModTime;
// Size is -1 (CopyObject does not report it).
//
// Retries as for PutIfAbsent: when an earlier attempt may have been applied
// and a retry gets 412, the destination is read back, and if it holds the
// source's current bytes the copy succeeded. (Two processes copying one
// source to one new name at the same instant can then both succeed; both
// created the same object.)
func (s *Store) CopyIfAbsent(ctx context.Context, src, dst string) (storage.Info, error) {
	if err := keyErr(storage.OpCopyIfAbsent, src); err != nil {
		return storage.Info{}, err
	}
	if err := s.begin(ctx, storage.OpCopyIfAbsent, dst); err != nil {
		return storage.Info{}, err
	}
	if !s.CopiesIfAbsent() {
		return storage.Info{}, wrap(storage.OpCopyIfAbsent, dst, storage.ErrUnsupported)
	}
	source := copySource(s.cfg.Bucket, s.full(src))
	var info storage.Info
	ambiguous, err := s.retry(ctx, 0, func(ctx context.Context) error {
		out, err := s.client.CopyObject(ctx, &awss3.CopyObjectInput{
			Bucket: &s.cfg.Bucket, Key: aws.String(s.full(dst)),
			CopySource: aws.String(source), IfNoneMatch: aws.String("*"),
		})
		if err != nil {
			return err
		}
		info = storage.Info{Key: dst, Size: -1, ModTime: responseDate(out.ResultMetadata)}
		if r := out.CopyObjectResult; r != nil {
			info.ETag = aws.ToString(r.ETag)
			if r.LastModified != nil {
				info.ModTime = *r.LastModified
			}
		}
		return nil
	})
	switch {
	case err == nil:
		return info, nil
	case errors.Is(err, storage.ErrNotFound):
		// 404 NoSuchKey names the source: a missing destination is the
		// point of the request.
		err = &storage.CopySourceError{Src: src}
	case errors.Is(err, storage.ErrUnsupported):
		s.copyRefused.Store(true)
	case errors.Is(err, storage.ErrPrecondition):
		err = storage.ErrExists
		if ambiguous {
			if won, ok := s.copyWonEarlier(ctx, src, dst); ok {
				return won, nil
			}
		}
	}
	return storage.Info{}, wrap(storage.OpCopyIfAbsent, dst, err)
}

// copyWonEarlier decides a 412 that followed an ambiguous copy attempt: if
// dst holds exactly src's bytes, that attempt won.
func (s *Store) copyWonEarlier(ctx context.Context, src, dst string) (storage.Info, bool) {
	cur, info, err := s.Get(ctx, dst)
	if err != nil {
		return storage.Info{}, false
	}
	orig, _, err := s.Get(ctx, src)
	if err != nil || !bytes.Equal(cur, orig) {
		return storage.Info{}, false
	}
	return info, true
}

// copySource is the x-amz-copy-source value for key in bucket: bucket/key
// with each segment URL-encoded.
func copySource(bucket, key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return bucket + "/" + strings.Join(segs, "/")
}
