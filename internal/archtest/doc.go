// Package archtest holds no code: its test locks the import direction of
// the module's packages (DESIGN §2, docs/architecture.md) so that an arrow
// added against it fails `go test ./...`. The rules are the table in
// imports_test.go; a new package needs a line there.
package archtest
