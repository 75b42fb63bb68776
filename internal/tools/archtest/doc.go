// Package archtest locks the import direction of the module's packages: its
// table (Rules, in rules.go) names, for each package, the packages of the
// module it may import and what the package is for, and its test fails
// `go test ./...` on an arrow against the table, on a package the table
// lacks and on a rule that matches no package. docs/architecture.md's
// package table is generated from the same table (internal/cmd/gendocs).
package archtest
