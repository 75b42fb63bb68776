package ocr

import "fmt"

// progress reports how far the recognition of one document has got; nil
// reports nothing (agentcore.Call.Progress's signature).
type progress func(done, total float64, message string)

func (p progress) report(done, total int, format string, args ...any) {
	if p != nil {
		p(float64(done), float64(total), fmt.Sprintf(format, args...))
	}
}
