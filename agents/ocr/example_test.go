package ocr_test

import (
	"fmt"

	"github.com/agentura/agentura/agents/ocr"
)

// LoadConfig reads the agent's own settings; a program passes os.LookupEnv.
// A bad value names its variable.
func ExampleLoadConfig() {
	env := map[string]string{"AGENT_OCR_MAX_PAGES": "20", "AGENT_OCR_TIMEOUT": "2m"}
	cfg, err := ocr.LoadConfig(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	fmt.Println(cfg.MaxPages, cfg.MaxPixels, cfg.Timeout, err)

	env["AGENT_OCR_MAX_PAGES"] = "lots"
	_, err = ocr.LoadConfig(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	fmt.Println(err)
	// Output:
	// 20 64000000 2m0s <nil>
	// AGENT_OCR_MAX_PAGES="lots": must be a positive whole number
}
