package deepgemm_test

import (
	"errors"
	"fmt"

	deepgemm "github.com/deepgemm/deepgemm/bindings/go"
)

// y = gelu(x @ w^T + b) on the CPU backend, the weight stored n x k like a torch.nn.Linear's.
func Example() {
	ctx, err := deepgemm.NewContext(deepgemm.DeviceCPU, 0) // DeviceCUDA or DeviceAuto on a GPU
	if err != nil {
		panic(err)
	}
	defer ctx.Close()

	const m, n, k = 2, 3, 4
	p := deepgemm.NewProblem(m, n, k, deepgemm.F32)
	p.TransB = true
	e := deepgemm.NewEpilogue()
	e.BiasMode, e.BiasType, e.Activation = deepgemm.VectorPerColumn, deepgemm.F32, deepgemm.ActGELUErf
	plan, err := ctx.NewPlan(p, &e, nil)
	if err != nil {
		panic(err)
	}
	defer plan.Close()

	x, _ := deepgemm.NewHostBuffer(4 * m * k) // C-allocated: safe to hand to the library
	w, _ := deepgemm.NewHostBuffer(4 * n * k)
	b, _ := deepgemm.NewHostBuffer(4 * n)
	y, _ := deepgemm.NewHostBuffer(4 * m * n)
	defer x.Close()
	defer w.Close()
	defer b.Close()
	defer y.Close()
	copy(x.Float32s(), []float32{1, 2, 3, 4, -1, -2, -3, -4})
	copy(w.Float32s(), []float32{0.5, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0.5, 0.5})
	copy(b.Float32s(), []float32{0, 1, -1})
	if err := plan.Execute(x, w, nil, y, &deepgemm.ExecArgs{Bias: b}, nil, 0); err != nil {
		var de *deepgemm.Error
		if errors.As(err, &de) {
			fmt.Println(de.Status, de.Message)
		}
		return
	}
	fmt.Printf("%.4f\n", y.Float32s())
	// Output: [0.3457 1.9545 2.4845 -0.1543 0.0000 -0.0000]
}
