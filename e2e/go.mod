module github.com/nemolens/lens-go/e2e

go 1.26

require github.com/nemolens/lens-go v0.0.0

replace github.com/nemolens/lens-go => ../
