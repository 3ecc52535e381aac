// Package computer is Area D's computer-use library: sessions with states
// and hard safety limits, screen actions executed for real on an X11
// display (pure Go: github.com/jezek/xgb with XTEST for input and GetImage
// for screenshots), and a loop that lets the hosted model drive a session
// through the beta computer-use tool.
//
// It is plain Go with no MCP or gRPC; the vision plugin wraps it.
package computer

import (
	"fmt"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Fixed safety ceilings (specification part 8). They are constants, not
// settings: a session configured above one is refused.
const (
	MaxActionsCeiling     = 1000
	MaxDurationMsCeiling  = 3_600_000
	MaxScreenshotsCeiling = 200
	MaxTextLength         = 10_000
	MaxWaitTimeMs         = 60_000
	MaxCoordinate         = 4096
)

// Session defaults (specification part 8).
const (
	DefaultDisplayWidth   = 1920
	DefaultDisplayHeight  = 1080
	DefaultMaxActions     = 100
	DefaultMaxDurationMs  = 300_000
	DefaultMaxScreenshots = 50
	DefaultSequenceDelay  = 100
	MaxDescriptionLength  = 1000
)

// SessionConfig is the BetaComputerSession constructor's config. Zero
// values take the defaults; DisplayWidth and DisplayHeight of zero take the
// real display's size when there is one (else 1920×1080).
type SessionConfig struct {
	DisplayWidth       int    `json:"displayWidth"`
	DisplayHeight      int    `json:"displayHeight"`
	MaxActions         int    `json:"maxActions"`
	MaxDurationMs      int    `json:"maxDurationMs"`
	MaxScreenshots     int    `json:"maxScreenshots"`
	CaptureScreenshots *bool  `json:"captureScreenshots"`
	AutoPauseOnError   bool   `json:"autoPauseOnError"`
	Description        string `json:"description"`
}

// Capture reports whether start and end take screenshots.
func (c SessionConfig) Capture() bool { return c.CaptureScreenshots == nil || *c.CaptureScreenshots }

// Resolve validates c and fills in defaults; physW and physH are the real
// display's size (0 when unknown). A value above a ceiling or below 1 is
// refused with ERR_INVALID_INPUT naming the field.
func (c SessionConfig) Resolve(physW, physH int) (SessionConfig, error) {
	check := func(field string, v *int, def, ceiling int) error {
		if *v == 0 {
			*v = def
			return nil
		}
		if *v < 1 {
			return errs.Invalidf(field, "minimum", "%s must be at least 1", field)
		}
		if *v > ceiling {
			return errs.Invalidf(field, "maximum", "%s %d is above the fixed safety ceiling %d", field, *v, ceiling).With("ceiling", ceiling)
		}
		return nil
	}
	defW, defH := DefaultDisplayWidth, DefaultDisplayHeight
	if physW > 0 && physH > 0 {
		defW, defH = physW, physH
	}
	if err := check("displayWidth", &c.DisplayWidth, defW, MaxCoordinate); err != nil {
		return c, err
	}
	if err := check("displayHeight", &c.DisplayHeight, defH, MaxCoordinate); err != nil {
		return c, err
	}
	if err := check("maxActions", &c.MaxActions, DefaultMaxActions, MaxActionsCeiling); err != nil {
		return c, err
	}
	if err := check("maxDurationMs", &c.MaxDurationMs, DefaultMaxDurationMs, MaxDurationMsCeiling); err != nil {
		return c, err
	}
	if err := check("maxScreenshots", &c.MaxScreenshots, DefaultMaxScreenshots, MaxScreenshotsCeiling); err != nil {
		return c, err
	}
	if len([]rune(c.Description)) > MaxDescriptionLength {
		return c, errs.Invalidf("description", "maxLength", "description is longer than %d characters", MaxDescriptionLength)
	}
	if c.CaptureScreenshots == nil {
		t := true
		c.CaptureScreenshots = &t
	}
	return c, nil
}

// String is a one-line summary for logs.
func (c SessionConfig) String() string {
	return fmt.Sprintf("%dx%d actions=%d duration=%dms screenshots=%d", c.DisplayWidth, c.DisplayHeight, c.MaxActions, c.MaxDurationMs, c.MaxScreenshots)
}
