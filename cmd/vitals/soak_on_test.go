//go:build soak

package main

// soak is true under -tags soak: the reliability tests run their full length
// (RELIABILITY.md; docs/development.md); without the tag they run their short
// variants, as .ci/run does.
const soak = true
