package timefmt

import (
	"testing"
	"time"
)

func TestCoarseRoundsToTheMillisecondUnderASecondElseToTheSecond(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{340*time.Millisecond + 400*time.Microsecond, "340ms"},
		{999*time.Millisecond + 600*time.Microsecond, "1s"},
		{1400 * time.Millisecond, "1s"},
		{12*time.Second + 600*time.Millisecond, "13s"},
		{90*time.Second + 200*time.Millisecond, "1m30s"},
	} {
		if got := Coarse(tc.d); got != tc.want {
			t.Errorf("Coarse(%v) = %s, want %s", tc.d, got, tc.want)
		}
	}
}
