// Command demologin serves the login and consent pages of the demonstration
// identity provider (Ory Hydra) of `make up-auth`: see internal/tools/demologin.
// Its user store is a demo: a fixed list of users from DEMOLOGIN_USERS.
//
//	DEMOLOGIN_ADDR=:4446 HYDRA_ADMIN_URL=https://hydra:4445 HYDRA_PUBLIC_URL=https://localhost:4444 \
//	DEMOLOGIN_USERS=alice:pw1,bob:pw2 DEMOLOGIN_TLS_CERT=cert.pem DEMOLOGIN_TLS_KEY=key.pem demologin
//
// HYDRA_PUBLIC_URL is Hydra's public URL as the browser reaches it (its
// issuer): the login page's Content-Security-Policy lets the form's answer
// redirect to its origin.
//
// With --healthcheck it asks a running instance for /healthz and exits 0
// when it answers (the image's health check).
package main

import (
	"cmp"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/agentura/agentura/internal/tools/demologin"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demologin:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := cmp.Or(os.Getenv("DEMOLOGIN_ADDR"), ":4446")
	cert, key := os.Getenv("DEMOLOGIN_TLS_CERT"), os.Getenv("DEMOLOGIN_TLS_KEY")
	if len(os.Args) > 1 && os.Args[1] == "--healthcheck" {
		scheme := "http"
		if cert != "" {
			scheme = "https"
		}
		c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // loopback probe of itself
		resp, err := c.Get(scheme + "://127.0.0.1" + portOf(addr) + "/healthz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return errors.New(resp.Status)
		}
		return nil
	}
	users, err := demologin.ParseUsers(os.Getenv("DEMOLOGIN_USERS"))
	if err != nil {
		return fmt.Errorf("DEMOLOGIN_USERS: %w", err)
	}
	h, err := demologin.New(demologin.Config{AdminURL: os.Getenv("HYDRA_ADMIN_URL"), PublicURL: os.Getenv("HYDRA_PUBLIC_URL"), Users: users})
	if err != nil {
		return fmt.Errorf("HYDRA_ADMIN_URL, HYDRA_PUBLIC_URL: %w", err)
	}
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	slog.Warn("demo login app: its user store is a fixed demo list, not for real users", "addr", addr, "users", len(users))
	if cert != "" {
		return srv.ListenAndServeTLS(cert, key)
	}
	return srv.ListenAndServe()
}

// portOf returns ":port" of a listen address.
func portOf(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		return addr[i:]
	}
	return ":" + addr
}
