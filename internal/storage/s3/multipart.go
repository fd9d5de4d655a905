package s3

import (
	"bytes"
	"context"
	"errors"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// partConcurrency is how many parts of one upload are in flight at once.
const partConcurrency = 4

// putMultipart uploads data in parts and completes the upload with cond, so
// a conditional put of a large object is exactly as atomic as a small one:
// nothing is visible before CompleteMultipartUpload, and the condition is
// checked there. A failed upload is aborted (best effort; a bucket
// lifecycle rule for incomplete uploads reclaims the rest).
func (s *Store) putMultipart(ctx context.Context, key string, data []byte, cond condition) (storage.Info, error) {
	full := aws.String(s.full(key))
	var uploadID *string
	if _, err := s.retry(ctx, 0, func(ctx context.Context) error {
		out, err := s.client.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{Bucket: &s.cfg.Bucket, Key: full})
		if err != nil {
			return err
		}
		uploadID = out.UploadId
		return nil
	}); err != nil {
		return storage.Info{}, err
	}
	completed := false
	defer func() {
		if !completed {
			// Detached: abort even when ctx is what failed the upload.
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.AttemptTimeout)
			defer cancel()
			s.attempts.Add(1)
			_, _ = s.client.AbortMultipartUpload(actx, &awss3.AbortMultipartUploadInput{Bucket: &s.cfg.Bucket, Key: full, UploadId: uploadID})
		}
	}()

	nparts := (int64(len(data)) + s.cfg.PartSize - 1) / s.cfg.PartSize
	parts := make([]types.CompletedPart, nparts)
	errs := make([]error, nparts)
	sem := make(chan struct{}, partConcurrency)
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for i := range nparts {
		lo := i * s.cfg.PartSize
		hi := min(lo+s.cfg.PartSize, int64(len(data)))
		num := aws.Int32(int32(i + 1))
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			_, err := s.retry(pctx, int(hi-lo), func(ctx context.Context) error {
				out, err := s.client.UploadPart(ctx, &awss3.UploadPartInput{
					Bucket: &s.cfg.Bucket, Key: full, UploadId: uploadID, PartNumber: num,
					Body: bytes.NewReader(data[lo:hi]), ContentLength: aws.Int64(hi - lo),
				})
				if err != nil {
					return err
				}
				parts[i] = types.CompletedPart{ETag: out.ETag, PartNumber: num,
					ChecksumCRC32: out.ChecksumCRC32, ChecksumCRC32C: out.ChecksumCRC32C,
					ChecksumCRC64NVME: out.ChecksumCRC64NVME, ChecksumSHA1: out.ChecksumSHA1, ChecksumSHA256: out.ChecksumSHA256}
				return nil
			})
			if err != nil {
				errs[i] = err
				cancel()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		if ctx.Err() != nil {
			return storage.Info{}, ctx.Err()
		}
		return storage.Info{}, firstErr(errs)
	}

	var info storage.Info
	ambiguous, err := s.retry(ctx, 0, func(ctx context.Context) error {
		in := &awss3.CompleteMultipartUploadInput{Bucket: &s.cfg.Bucket, Key: full, UploadId: uploadID,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}
		setCondition(&in.IfNoneMatch, &in.IfMatch, cond)
		out, err := s.client.CompleteMultipartUpload(ctx, in)
		if err != nil {
			return err
		}
		info = storage.Info{Key: key, Size: int64(len(data)), ETag: aws.ToString(out.ETag), ModTime: responseDate(out.ResultMetadata)}
		return nil
	})
	if err == nil {
		completed = true
		return info, nil
	}
	if errors.Is(err, storage.ErrNotFound) && ambiguous {
		// NoSuchUpload after a lost answer: the upload was completed by an
		// earlier attempt (or aborted); the object decides.
		completed = true
		return s.wonEarlier(ctx, key, data, storage.ErrPrecondition)
	}
	if ambiguous && cond != (condition{}) && errors.Is(err, storage.ErrPrecondition) {
		return s.wonEarlier(ctx, key, data, err)
	}
	return storage.Info{}, err
}

func firstErr(errs []error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
