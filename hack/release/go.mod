module github.com/vitals-dev/vitals/hack/release

go 1.26.0

require (
	github.com/goccy/go-yaml v1.19.2
	golang.org/x/mod v0.41.0
)
