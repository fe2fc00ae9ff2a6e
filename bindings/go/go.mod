module github.com/deepgemm/deepgemm/bindings/go

go 1.19
