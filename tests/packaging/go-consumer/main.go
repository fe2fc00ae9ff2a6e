// A program outside this repository that uses DeepGEMM's Go module as any Go user would: it
// requires github.com/deepgemm/deepgemm/bindings/go at a version (go_consumer.sh serves it from a
// module proxy folder) and builds with `go build`, finding the library through pkg-config.
// y = gelu(x @ w^T + b) on the CPU backend, checked against values computed here.
package main

import (
	"fmt"
	"math"
	"os"

	deepgemm "github.com/deepgemm/deepgemm/bindings/go"
)

func main() {
	ctx, err := deepgemm.NewContext(deepgemm.DeviceCPU, 0)
	if err != nil {
		fail(err)
	}
	defer ctx.Close()
	const m, n, k = 3, 5, 7
	p := deepgemm.NewProblem(m, n, k, deepgemm.F32)
	p.TransB = true
	e := deepgemm.NewEpilogue()
	e.BiasMode, e.BiasType, e.Activation = deepgemm.VectorPerColumn, deepgemm.F32, deepgemm.ActGELUErf
	plan, err := ctx.NewPlan(p, &e, nil)
	if err != nil {
		fail(err)
	}
	defer plan.Close()
	x, _ := deepgemm.NewHostBuffer(4 * m * k)
	w, _ := deepgemm.NewHostBuffer(4 * n * k)
	b, _ := deepgemm.NewHostBuffer(4 * n)
	y, _ := deepgemm.NewHostBuffer(4 * m * n)
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(math.Sin(float64(i)))
	}
	for i := range w.Float32s() {
		w.Float32s()[i] = float32(math.Cos(float64(3 * i)))
	}
	for i := range b.Float32s() {
		b.Float32s()[i] = float32(i) / 4
	}
	if err := plan.Execute(x, w, nil, y, &deepgemm.ExecArgs{Bias: b}, nil, 0); err != nil {
		fail(err)
	}
	worst := 0.0
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			acc := float64(b.Float32s()[j])
			for l := 0; l < k; l++ {
				acc += float64(x.Float32s()[i*k+l]) * float64(w.Float32s()[j*k+l])
			}
			want := 0.5 * acc * (1 + math.Erf(acc/math.Sqrt2))
			worst = math.Max(worst, math.Abs(float64(y.Float32s()[i*n+j])-want))
		}
	}
	if worst > 1e-5 {
		fail(fmt.Errorf("largest difference %.3g", worst))
	}
	fmt.Printf("[go] OK: deepgemm %s, %dx%dx%d bias+gelu, largest difference %.1e\n", deepgemm.Version(), m, n, k, worst)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "FAIL:", err)
	os.Exit(1)
}
