// Tests of DGEMM_1.1 scaling through the Go binding on the CPU backend: FP8 with DeepGEMM's
// 1 x 128 / 128 x 128 block scales, INT8 dequantized with per-token x per-channel scales and a
// bias, the fused block-scaled FP8 output with UE8M0 scales and amax, and the errors.
package deepgemm

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// e4m3 decodes an OCP FP8 E4M3 byte (bias 7, no infinities, 0x7f / 0xff NaN).
func e4m3(b byte) float64 {
	sign := 1.0
	if b&0x80 != 0 {
		sign = -1
	}
	exp, man := int(b>>3)&0xf, float64(b&7)
	if exp == 0xf && b&7 == 7 {
		return math.NaN()
	}
	if exp == 0 {
		return sign * math.Ldexp(man, -9)
	}
	return sign * math.Ldexp(1+man/8, exp-7)
}

// randomE4M3 fills a buffer with random finite E4M3 bytes.
func randomE4M3(t *testing.T, n int) *HostBuffer {
	t.Helper()
	b, err := NewHostBuffer(n)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b.Bytes() {
		v := byte(rng.Intn(256))
		for v&0x7f > 0x50 { // finite, |x| <= 8
			v = byte(rng.Intn(256))
		}
		b.Bytes()[i] = v
	}
	return b
}

func buffer(t *testing.T, bytes int) *HostBuffer {
	t.Helper()
	b, err := NewHostBuffer(bytes)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFP8BlockScaledInputs(t *testing.T) {
	ctx, err := NewContext(DeviceCPU, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	const m, n, k = 9, 140, 300 // K has 3 blocks (the last one partial), N two 128-blocks
	const kb, nb = 3, 2
	p := NewProblem(m, n, k, F8E4M3)
	p.CType, p.DType, p.TransB = F32, F32, true
	p.Scaling = &Scaling{A: Scale{Mode: ScaleVec128, Layout: ScaleKMajor}, B: Scale{Mode: ScaleBlk128x128, Layout: ScaleKMajor}}
	plan, err := ctx.NewPlan(p, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	sa, sbShape, _ := plan.ScaleShapes()
	if sa != (ScaleShape{Rows: m, Cols: kb, Ld: kb, Elements: m * kb}) || sbShape.Rows != nb || sbShape.Cols != kb {
		t.Fatalf("scale shapes %+v %+v", sa, sbShape)
	}
	a, b := randomE4M3(t, m*k), randomE4M3(t, n*k)
	as, bs := randomBuffer(t, m*kb), randomBuffer(t, nb*kb)
	d := poisoned(t, m*n)
	defer func() { a.Close(); b.Close(); as.Close(); bs.Close(); d.Close() }()
	if err := plan.Execute(a, b, nil, d, &ExecArgs{AScale: as, BScale: bs}, nil, 0); err != nil {
		t.Fatal(err)
	}
	ref := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			for p := 0; p < k; p++ {
				scale := float64(as.Float32s()[i*kb+p/128]) * float64(bs.Float32s()[(j/128)*kb+p/128])
				ref[i*n+j] += scale * e4m3(a.Bytes()[i*k+p]) * e4m3(b.Bytes()[j*k+p])
			}
		}
	}
	if e := relError(t, d.Float32s(), ref); e > 1e-6 {
		t.Fatalf("relative error %g", e)
	}

	// A missing tensor is the library's INVALID_ARGUMENT naming it; a short buffer is refused here.
	var de *Error
	err = plan.Execute(a, b, nil, d, &ExecArgs{AScale: as}, nil, 0)
	if !errors.As(err, &de) || de.Status != StatusInvalidArgument || !strings.Contains(de.Message, "scale_args->b_scale is NULL") {
		t.Fatalf("missing b scale: %v", err)
	}
	short := buffer(t, 4*(m*kb-1))
	defer short.Close()
	err = plan.Execute(a, b, nil, d, &ExecArgs{AScale: short, BScale: bs}, nil, 0)
	if !errors.As(err, &de) || de.Status != StatusInvalidArgument || !strings.Contains(de.Message, "a scale holds") {
		t.Fatalf("short a scale: %v", err)
	}
}

func TestINT8DequantizedPerTokenPerChannel(t *testing.T) {
	ctx, err := NewContext(DeviceCPU, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	const m, n, k = 17, 33, 70
	p := NewProblem(m, n, k, I8)
	p.CType, p.DType, p.TransB = F32, F32, true
	p.Scaling = &Scaling{A: Scale{Mode: ScaleOuterVec}, B: Scale{Mode: ScaleOuterVec}}
	e := NewEpilogue()
	e.BiasMode, e.BiasType = VectorPerColumn, F32
	plan, err := ctx.NewPlan(p, &e, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	a, b := buffer(t, m*k), buffer(t, n*k)
	for i := range a.Int8s() {
		a.Int8s()[i] = int8(rng.Intn(255) - 127)
	}
	for i := range b.Int8s() {
		b.Int8s()[i] = int8(rng.Intn(255) - 127)
	}
	as, bs, bias, d := randomBuffer(t, m), randomBuffer(t, n), randomBuffer(t, n), poisoned(t, m*n)
	defer func() {
		a.Close()
		b.Close()
		as.Close()
		bs.Close()
		bias.Close()
		d.Close()
	}()
	if err := plan.Execute(a, b, nil, d, &ExecArgs{Bias: bias, AScale: as, BScale: bs}, nil, 0); err != nil {
		t.Fatal(err)
	}
	ref := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			acc := int64(0)
			for p := 0; p < k; p++ {
				acc += int64(a.Int8s()[i*k+p]) * int64(b.Int8s()[j*k+p])
			}
			ref[i*n+j] = float64(acc)*float64(as.Float32s()[i])*float64(bs.Float32s()[j]) + float64(bias.Float32s()[j])
		}
	}
	if e := relError(t, d.Float32s(), ref); e > 1e-6 {
		t.Fatalf("relative error %g", e)
	}
}

func TestFusedBlockScaledOutputWithUE8M0AndAmax(t *testing.T) {
	ctx, err := NewContext(DeviceCPU, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	const m, n, k = 5, 200, 40
	p := NewProblem(m, n, k, F32)
	p.DType = F8E4M3
	p.Scaling = &Scaling{D: Scale{Mode: ScaleVec128, Type: ScaleUE8M0}, AmaxD: true}
	plan, err := ctx.NewPlan(p, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	_, _, ds := plan.ScaleShapes()
	if ds != (ScaleShape{Rows: m, Cols: 2, Ld: m, Elements: 2 * m}) {
		t.Fatalf("d scale shape %+v", ds)
	}
	a, b := randomBuffer(t, m*k), randomBuffer(t, k*n)
	d, scales, amax := buffer(t, m*n), buffer(t, 2*m), buffer(t, 4)
	defer func() { a.Close(); b.Close(); d.Close(); scales.Close(); amax.Close() }()
	if err := plan.Execute(a, b, nil, d, &ExecArgs{DScale: scales, AmaxD: amax}, nil, 0); err != nil {
		t.Fatal(err)
	}
	ref := reference(a.Float32s(), b.Float32s(), nil, m, n, k, false, false, 1, nil)
	maxAll := 0.0
	deq := make([]float32, m*n)
	for i := 0; i < m; i++ {
		for jb := 0; jb < 2; jb++ {
			blockMax := 0.0
			for j := jb * 128; j < n && j < jb*128+128; j++ {
				blockMax = math.Max(blockMax, math.Abs(ref[i*n+j]))
			}
			maxAll = math.Max(maxAll, blockMax)
			scale := math.Ldexp(1, int(scales.Bytes()[i+jb*m])-127) // MN-major: (row, block) at row + block*m
			if !(scale*448 >= blockMax && scale*224 < blockMax) {
				t.Fatalf("block (%d, %d): scale %g for amax %g is not the power of two rounded up", i, jb, scale, blockMax)
			}
			for j := jb * 128; j < n && j < jb*128+128; j++ {
				deq[i*n+j] = float32(e4m3(d.Bytes()[i*n+j]) * scale)
			}
		}
	}
	if e := relError(t, deq, ref); e > 0.07 {
		t.Fatalf("dequantized relative error %g", e)
	}
	if got := float64(amax.Float32s()[0]); math.Abs(got-maxAll) > 1e-6*maxAll {
		t.Fatalf("amax %g, want %g", got, maxAll)
	}

	// Scale tensors given to a plan without scaling are refused.
	plain, err := ctx.NewPlan(NewProblem(m, n, k, F32), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	var de *Error
	d32 := poisoned(t, m*n)
	defer d32.Close()
	err = plain.Execute(a, b, nil, d32, &ExecArgs{AmaxD: amax}, nil, 0)
	if !errors.As(err, &de) || de.Status != StatusInvalidArgument || !strings.Contains(de.Message, "no Scaling") {
		t.Fatalf("scale args on a plain plan: %v", err)
	}
}
