package rtl

import (
	"fmt"
	"slices"
	"testing"
)

func TestShape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"بسم", "\uFE91\uFEB4\uFEE2"},               // initial, medial, final
		{"مرحبا", "\uFEE3\uFEAE\uFEA3\uFE92\uFE8E"}, // reh does not join forward: hah starts again
		{"لا", "\uFEFB"},                            // lam-alef ligature, isolated
		{"سلام", "\uFEB3\uFEFC\uFEE1"},              // lam-alef final after a joining letter
		{"ء", "\uFE80"},                             // hamza: isolated only
		{"بَب", "\uFE91\u064E\uFE90"},               // a mark between two letters keeps the join
		{"پا", "\uFB58\uFE8E"},                      // Persian peh from Presentation Forms-A
		{"abc ب", "abc \uFE8F"},
		{"plain", "plain"},
	} {
		if got := Shape(c.in); got != c.want {
			t.Errorf("Shape(%q) = %U, want %U", c.in, []rune(got), []rune(c.want))
		}
	}
}

func TestLevelsAndOrder(t *testing.T) {
	text := []rune("abc שלום 12 def")
	levels := Levels(text)
	if got := fmt.Sprint(levels[:4], levels[4:8], levels[13:]); got != "[0 0 0 0] [1 1 1 1] [0 0]" {
		t.Errorf("levels of an English paragraph with Hebrew: %v", levels)
	}
	rtl := []rune("שלום abc")
	if LeftToRight(rtl) {
		t.Error("a paragraph opening in Hebrew reads left to right")
	}
	if l := Levels(rtl); l[0] != 1 || l[5] != 2 {
		t.Errorf("levels of a Hebrew paragraph with English: %v", l)
	}
	// Items of levels 1 1 2 2 1 in logical order: the line shows them as 4 2 3 1 0.
	if got := Order([]uint8{1, 1, 2, 2, 1}); !slices.Equal(got, []int{4, 2, 3, 1, 0}) {
		t.Errorf("Order = %v", got)
	}
	if got := Order([]uint8{0, 1, 1, 0}); !slices.Equal(got, []int{0, 2, 1, 3}) {
		t.Errorf("Order = %v", got)
	}
}

func TestReverse(t *testing.T) {
	if got, want := Reverse("ab(c)\u064E"), "(\u064Ec)ba"; got != want {
		t.Errorf("Reverse = %q, want %q", got, want)
	}
}
