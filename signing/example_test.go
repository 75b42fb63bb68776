package signing_test

import (
	"context"
	"fmt"
	"log"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/signing"
)

// A service beside the agents (a portal, a batch job) shares their store
// and their signing key: it stores a file and mints a download URL for it,
// which the agents' file service then serves like one of its own. It reads
// the agents' settings: AGENT_SIGNING_KEY for the keys and AGENT_PUBLIC_URL,
// the agents' signer's audience, for the base of the URL. A real service
// opens the store the agents name in AGENT_STORAGE_URL (fileserve.OpenStore);
// here it is a disk store in a temporary folder.
func Example() {
	const (
		publicURL  = "http://localhost:8001"            // AGENT_PUBLIC_URL
		signingKey = "an example secret of 32 bytes ok" // AGENT_SIGNING_KEY
	)
	dir, err := os.MkdirTemp("", "signing-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := fileserve.NewDiskStore(dir)
	if err != nil {
		log.Fatal(err)
	}
	m, err := store.Put(context.Background(), fileserve.NewFile{
		Area:  fileserve.Outputs,
		Owner: "alice",
		Name:  "reports/Q1 summary.md",
	}, strings.NewReader("# Q1\n"))
	if err != nil {
		log.Fatal(err)
	}

	keys, err := signing.ParseKeys(signingKey)
	if err != nil {
		log.Fatal(err)
	}
	signer, err := signing.NewSigner(publicURL, keys)
	if err != nil {
		log.Fatal(err)
	}
	link, err := signer.FileURL(publicURL, signing.Claims{
		Owner:     m.Owner,
		FileID:    m.ID,
		Area:      string(m.Area),
		ExpiresAt: time.Now().Add(time.Hour), // AGENT_URL_TTL
	}, m.Name)
	if err != nil {
		log.Fatal(err)
	}
	u, err := url.Parse(link)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(u.Scheme + "://" + u.Host + strings.Replace(u.EscapedPath(), m.ID, "<id>", 1))

	// The agent builds its signer from the same settings, so it accepts the
	// token; the claims name the file in the store.
	agents, err := signing.NewSigner(publicURL, keys)
	if err != nil {
		log.Fatal(err)
	}
	c, err := agents.Verify(u.Query().Get("token"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("owner:", c.Owner)
	fmt.Println("file id is the stored file's:", c.FileID == m.ID)
	fmt.Println("area:", c.Area)

	// Another deployment (another public URL) refuses it.
	other, _ := signing.NewSigner("https://agents.example.org", keys)
	_, err = other.Verify(u.Query().Get("token"))
	fmt.Println(err)
	// Output:
	// http://localhost:8001/files/<id>/reports/Q1%20summary.md
	// owner: alice
	// file id is the stored file's: true
	// area: outputs
	// token was issued for another server
}
