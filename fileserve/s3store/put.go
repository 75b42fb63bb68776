package s3store

import (
	"bytes"
	"context"
	"math/rand/v2"
	"time"

	"github.com/minio/minio-go/v7"
)

// Sending a small PUT again when the S3 server reports a spurious conflict.
const (
	// putTries bounds the tries of one PUT of bytes in memory.
	putTries = 5
	// putBackoff is the pause before the second try; it doubles before
	// each later one, with jitter.
	putBackoff = 5 * time.Millisecond
)

// codeFolderRace is the error code versitygw's POSIX back end (the S3
// server of the scale-out deployment) answers, with 409, to a PUT whose key
// lies in a folder that a concurrent DELETE of that folder's last object
// is removing: the gateway removes emptied folders, and v1.8.0 retries the
// final link of a PUT but not the creation of its folders
// (versity/versitygw#1988). Records, index entries and journals come and
// go in shared folders all the time, so under load a few PUTs in a
// thousand meet it. The request is sound; sent again, it succeeds. No AWS
// S3 error has this code.
const codeFolderRace = "ExistingObjectIsDirectory"

// putBytes PUTs data under key in one request, sending it again (up to
// putTries times in all) when the server reports the folder race above.
// Every other error is returned at once.
func (s *Store) putBytes(ctx context.Context, key string, data []byte, opts minio.PutObjectOptions) error {
	pause := putBackoff
	for try := 1; ; try++ {
		_, err := s.client.PutObject(ctx, s.bucket, key, bytes.NewReader(data), int64(len(data)), opts)
		if err == nil || try == putTries || minio.ToErrorResponse(err).Code != codeFolderRace {
			return err
		}
		t := time.NewTimer(pause + rand.N(pause))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		pause *= 2
	}
}
