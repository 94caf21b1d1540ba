module github.com/vitals-dev/vitals/hack/release

go 1.26.0

require golang.org/x/mod v0.41.0
