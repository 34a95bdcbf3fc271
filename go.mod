module github.com/infergo/infer

go 1.26.0

require (
	github.com/x448/float16 v0.8.4
	golang.org/x/sync v0.25.0
	gonum.org/v1/gonum v0.17.0
)
