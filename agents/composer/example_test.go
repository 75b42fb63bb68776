package composer_test

import (
	"fmt"
	"os"

	"github.com/agentura/agentura/agents/composer"
)

// Markdown is parsed once; any format is rendered from the same tree.
func ExampleParse() {
	doc := composer.Parse([]byte("# Notes\n\nSome *text* and `code`.\n\n1. one\n2. two\n\n| a | b |\n|---|--:|\n| 1 | 2 |\n"), "")
	fmt.Println("title:", doc.Title)
	if err := doc.Write(os.Stdout, "md"); err != nil {
		fmt.Println(err)
	}
	// Output:
	// title: Notes
	// # Notes
	//
	// Some *text* and `code`.
	//
	// 1. one
	// 2. two
	//
	// | a | b |
	// | --- | ---: |
	// | 1 | 2 |
}
