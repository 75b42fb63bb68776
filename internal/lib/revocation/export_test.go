package revocation

import "time"

// SetClock makes l read the time from now, so that tests pass lapses
// without sleeping.
func SetClock(l *List, now func() time.Time) { l.now = now }
