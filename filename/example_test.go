package filename_test

import (
	"fmt"

	"github.com/agentura/agentura/filename"
)

func Example() {
	name := filename.Clean("..\\..\\reports/Q3\u202E.pdf")
	fmt.Println(name)
	fmt.Println(filename.Base(name))
	fmt.Println(filename.Numbered(name, 2))
	fmt.Println(filename.Numbered(".env", 3))
	fmt.Printf("%q\n", filename.Base("../.."))
	// Output:
	// reports/Q3.pdf
	// Q3.pdf
	// reports/Q3 (2).pdf
	// .env (3)
	// ""
}
