module github.com/vitals-dev/vitals

go 1.26
