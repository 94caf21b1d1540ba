//go:build !soak

package probe_test

// soak is false without -tags soak: the reliability tests run their short
// variants. See soak_on_test.go.
const soak = false
