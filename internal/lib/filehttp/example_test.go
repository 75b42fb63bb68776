package filehttp_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/filehttp"
	"github.com/agentura/agentura/signing"
)

// A tool's output is stored, handed out as a signed URL, and downloaded.
func ExampleServer_URL() {
	dir, _ := os.MkdirTemp("", "fileserve-example")
	defer os.RemoveAll(dir)
	store, err := fileserve.NewDiskStore(dir)
	if err != nil {
		log.Fatal(err)
	}

	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	defer ts.Close()

	key, _ := signing.NewKey([]byte("an example secret of 32 bytes ok"))
	signer, _ := signing.NewSigner(ts.URL, []signing.Key{key})
	srv, err := filehttp.NewServer(filehttp.Config{Store: store, Signer: signer, PublicURL: ts.URL})
	if err != nil {
		log.Fatal(err)
	}
	mux.HandleFunc("/files/", srv.ServeFile)
	mux.HandleFunc("/uploads", srv.ServeUpload)

	m, err := store.Put(context.Background(), fileserve.NewFile{
		Area:  fileserve.Outputs,
		Owner: "alice",
		Name:  "Quartalsbericht Q1.md",
	}, strings.NewReader("# Q1\n\nAll good.\n"))
	if err != nil {
		log.Fatal(err)
	}
	url, err := srv.URL(m)
	if err != nil {
		log.Fatal(err)
	}
	shown := strings.NewReplacer(ts.URL, "http://localhost:8001", m.ID, "<id>").Replace(url)
	fmt.Println(shown[:strings.Index(shown, "?token=")+len("?token=")] + "...")

	resp, err := http.Get(url)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status, resp.Header.Get("Content-Type"))
	fmt.Println(resp.Header.Get("Content-Disposition"))
	fmt.Printf("%q\n", body)

	resp, err = http.Get(strings.Split(url, "?")[0]) // without the token
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Status)
	// Output:
	// http://localhost:8001/files/<id>/Quartalsbericht%20Q1.md?token=...
	// 200 OK text/markdown; charset=utf-8
	// attachment; filename="Quartalsbericht Q1.md"; filename*=UTF-8''Quartalsbericht%20Q1.md
	// "# Q1\n\nAll good.\n"
	// 403 Forbidden
}
