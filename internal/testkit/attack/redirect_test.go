package attack

import (
	"net"
	"net/http"
	"strings"
)

// newRedirector serves on loopback what the open agent is allowed to fetch
// (AGENT_FETCH_ALLOW_HOSTS): /to?u=URL redirects to URL, /big answers more
// than the upload cap, /named sends a hostile Content-Disposition name, and
// anything else a small text file. It returns its base URL.
func newRedirector() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/to", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("u"), http.StatusFound)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("b", uploadCap+100)))
	})
	mux.HandleFunc("/named", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Disposition", `attachment; filename="../../etc/evil\u202e.txt"`)
		w.Write([]byte("named"))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("fetched content"))
	})
	go http.Serve(ln, mux)
	return "http://" + ln.Addr().String()
}
