// Package fonts holds the TrueType fonts the composer embeds in the PDFs it
// writes: DejaVu Sans (regular, bold, oblique) and DejaVu Sans Mono, which
// cover Latin, Greek and Cyrillic among others, so text in those scripts
// survives. They are compiled into the binary, which therefore needs no font
// installed where it runs. See LICENSE beside this file (Bitstream Vera
// licence; DejaVu changes are in the public domain).
//
// For the characters they lack (Chinese, Japanese, Korean, Devanagari and
// more), Fallback finds TrueType files in folders of the system
// (AGENT_FONT_DIRS), keeping only those go-pdf/fpdf can embed.
package fonts

import _ "embed"

// Sans is DejaVu Sans, the body font.
//
//go:embed DejaVuSans.ttf
var Sans []byte

// SansBold is DejaVu Sans Bold, for headings and strong text.
//
//go:embed DejaVuSans-Bold.ttf
var SansBold []byte

// SansOblique is DejaVu Sans Oblique, for emphasis.
//
//go:embed DejaVuSans-Oblique.ttf
var SansOblique []byte

// Mono is DejaVu Sans Mono, for code.
//
//go:embed DejaVuSansMono.ttf
var Mono []byte
