package blobstore_test

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/toolnexus/toolnexus-go/artifact"
	"github.com/toolnexus/toolnexus-go/artifact/blobstore"
	"gocloud.dev/blob/memblob"
)

// A store in a bucket: here blob's memory driver; in production a bucket
// opened by URL (gs://, s3://, azblob://) with its driver imported.
func Example() {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	store := blobstore.New(bucket, blobstore.Options{})
	key := artifact.Key{User: "alice", Thread: "t1", Name: "notes.txt"}
	for _, text := range []string{"first draft", "second draft"} {
		info, err := store.Save(ctx, key, strings.NewReader(text), artifact.SaveOptions{ContentType: "text/plain"})
		if err != nil {
			panic(err)
		}
		fmt.Println("saved version", info.Version)
	}
	f, err := store.Open(ctx, key, 1)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	fmt.Printf("version 1: %s\n", b)
	// Output:
	// saved version 1
	// saved version 2
	// version 1: first draft
}
