// Command freeport prints N loopback TCP ports that nothing listens on now,
// distinct, separated by spaces: deploy/e2e.sh publishes the deployment
// tests' ports there when they are not given, so that a run does not take
// the ports of another deployment on the same machine.
//
//	go run ./internal/cmd/freeport 4    # e.g. "41237 39881 45013 36623"
//
// The kernel picks each port (a listener on 127.0.0.1:0); all N listen at
// once, so they differ, and are closed before freeport exits. Another
// program may take one in between: what is picked free is free now.
package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

func main() {
	ports, err := run(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "freeport:", err)
		os.Exit(2)
	}
	fmt.Println(ports)
}

// run picks the ports args ask for (one argument, N from 1 to 64) and
// returns them separated by spaces.
func run(args []string) (string, error) {
	if len(args) != 1 {
		return "", fmt.Errorf("usage: freeport N (how many ports, 1 to 64)")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 || n > 64 {
		return "", fmt.Errorf("N is %q: give a number from 1 to 64", args[0])
	}
	ports := make([]string, 0, n)
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", fmt.Errorf("listen on a loopback port: %w", err)
		}
		defer ln.Close()
		ports = append(ports, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	}
	return strings.Join(ports, " "), nil
}
