// Tests of the Go binding on the CPU backend: results against a float64 reference computed here
// (relative Frobenius error), fresh random inputs, poisoned outputs, errors with status and
// message, concurrent execution of one plan. Run: go test ./... (with deepgemm.pc on PKG_CONFIG_PATH)
package deepgemm

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"
)

var rng = rand.New(rand.NewSource(time.Now().UnixNano()))

func randomBuffer(t *testing.T, n int) *HostBuffer {
	t.Helper()
	b, err := NewHostBuffer(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b.Float32s() {
		b.Float32s()[i] = float32(rng.Float64()*2 - 1)
	}
	return b
}

func poisoned(t *testing.T, n int) *HostBuffer {
	t.Helper()
	b, err := NewHostBuffer(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b.Float32s() {
		b.Float32s()[i] = float32(math.NaN())
	}
	return b
}

func gelu(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }

// reference computes act(alpha * op(A) @ op(B) + bias) for row-major packed operands.
func reference(a, b, bias []float32, m, n, k int, transA, transB bool, alpha float64, act func(float64) float64) []float64 {
	out := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			acc := 0.0
			for p := 0; p < k; p++ {
				av := a[i*k+p]
				if transA {
					av = a[p*m+i]
				}
				bv := b[p*n+j]
				if transB {
					bv = b[j*k+p]
				}
				acc += float64(av) * float64(bv)
			}
			x := alpha * acc
			if bias != nil {
				x += float64(bias[j])
			}
			if act != nil {
				x = act(x)
			}
			out[i*n+j] = x
		}
	}
	return out
}

func relError(t *testing.T, got []float32, ref []float64) float64 {
	t.Helper()
	var e, r float64
	for i := range ref {
		g := float64(got[i])
		if math.IsNaN(g) {
			t.Fatalf("D[%d] not written", i)
		}
		e += (g - ref[i]) * (g - ref[i])
		r += ref[i] * ref[i]
	}
	return math.Sqrt(e / math.Max(r, 1e-300))
}

func cpuContext(t *testing.T) *Context {
	t.Helper()
	ctx, err := NewContext(DeviceCPU, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ctx.Close(); err != nil {
			t.Error(err)
		}
	})
	return ctx
}

func TestVersion(t *testing.T) {
	if !strings.HasPrefix(Version(), "1.") {
		t.Fatalf("version %q", Version())
	}
	if StatusNoDevice.String() != "DGEMM_STATUS_NO_DEVICE" {
		t.Fatal(StatusNoDevice.String())
	}
}

func TestF32BiasGELUAllTransposes(t *testing.T) {
	ctx := cpuContext(t)
	if kind, index, err := ctx.Device(); err != nil || kind != DeviceCPU || index != 0 {
		t.Fatalf("Device() = %v %v %v", kind, index, err)
	}
	for _, shape := range [][3]int{{1, 1, 1}, {17, 15, 16}, {64, 7, 129}, {33, 65, 1}} {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				m, n, k := shape[0], shape[1], shape[2]
				p := NewProblem(int64(m), int64(n), int64(k), F32)
				p.TransA, p.TransB = ta, tb
				e := NewEpilogue()
				e.Alpha = 0.5
				e.BiasMode, e.BiasType, e.Activation = VectorPerColumn, F32, ActGELUErf
				plan, err := ctx.NewPlan(p, &e, nil)
				if err != nil {
					t.Fatal(err)
				}
				a, b, bias, d := randomBuffer(t, m*k), randomBuffer(t, k*n), randomBuffer(t, n), poisoned(t, m*n)
				if err := plan.Execute(a, b, nil, d, &ExecArgs{Bias: bias}, nil, 0); err != nil {
					t.Fatal(err)
				}
				ref := reference(a.Float32s(), b.Float32s(), bias.Float32s(), m, n, k, ta, tb, 0.5, gelu)
				if rel := relError(t, d.Float32s(), ref); rel > 1e-5 {
					t.Errorf("%dx%dx%d ta=%v tb=%v: relative error %g", m, n, k, ta, tb, rel)
				}
				for _, buf := range []*HostBuffer{a, b, bias, d} {
					buf.Close()
				}
				if err := plan.Close(); err != nil {
					t.Fatal(err)
				}
				if err := plan.Close(); err != nil {
					t.Fatal("second Close:", err)
				}
			}
		}
	}
}

func TestExecuteAlphaOverrideAndDescribe(t *testing.T) {
	ctx := cpuContext(t)
	m, n, k := 9, 11, 13
	plan, err := ctx.NewPlan(NewProblem(int64(m), int64(n), int64(k), F32), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	desc, err := plan.Describe()
	if err != nil {
		t.Fatal(err)
	}
	var info map[string]interface{}
	if err := json.Unmarshal([]byte(desc), &info); err != nil || info["backend"] != "cpu" {
		t.Fatalf("describe %q: %v", desc, err)
	}
	a, b, d := randomBuffer(t, m*k), randomBuffer(t, k*n), poisoned(t, m*n)
	defer a.Close()
	defer b.Close()
	defer d.Close()
	alpha := float32(-2)
	if err := plan.Execute(a, b, nil, d, &ExecArgs{Alpha: &alpha}, nil, 0); err != nil {
		t.Fatal(err)
	}
	ref := reference(a.Float32s(), b.Float32s(), nil, m, n, k, false, false, -2, nil)
	if rel := relError(t, d.Float32s(), ref); rel > 1e-5 {
		t.Fatalf("relative error %g", rel)
	}
}

func TestConcurrentExecute(t *testing.T) {
	ctx := cpuContext(t)
	m, n, k := 20, 24, 36
	e := NewEpilogue()
	e.Activation = ActReLU
	plan, err := ctx.NewPlan(NewProblem(int64(m), int64(n), int64(k), F32), &e, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	// Inputs are made here: the test's random source is not safe for concurrent use.
	type job struct{ a, b, d *HostBuffer }
	jobs := make([]job, 8)
	for i := range jobs {
		jobs[i] = job{randomBuffer(t, m*k), randomBuffer(t, k*n), poisoned(t, m*n)}
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(jobs))
	for _, j := range jobs {
		wg.Add(1)
		go func(j job) {
			defer wg.Done()
			if err := plan.Execute(j.a, j.b, nil, j.d, nil, nil, 0); err != nil {
				errs <- err
			}
		}(j)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	relu := func(x float64) float64 { return math.Max(x, 0) }
	for _, j := range jobs {
		ref := reference(j.a.Float32s(), j.b.Float32s(), nil, m, n, k, false, false, 1, relu)
		if rel := relError(t, j.d.Float32s(), ref); rel > 1e-5 {
			t.Errorf("relative error %g", rel)
		}
		j.a.Close()
		j.b.Close()
		j.d.Close()
	}
}

func TestErrorsCarryStatusAndMessage(t *testing.T) {
	ctx := cpuContext(t)
	p := NewProblem(8, 8, 8, F32)
	p.Lda = 3
	_, err := ctx.NewPlan(p, nil, nil)
	var de *Error
	if !errors.As(err, &de) || de.Status != StatusInvalidArgument || !strings.Contains(de.Message, "lda") {
		t.Fatalf("lda too small: %v", err)
	}
	p = NewProblem(8, 8, 8, F32)
	p.BType = F16
	if _, err = ctx.NewPlan(p, nil, nil); !errors.As(err, &de) || de.Status != StatusNotSupported {
		t.Fatalf("mixed types: %v", err)
	}
	// A missing bias fails and leaves D untouched.
	e := NewEpilogue()
	e.BiasMode, e.BiasType = VectorPerColumn, F32
	plan, err := ctx.NewPlan(NewProblem(4, 5, 6, F32), &e, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b, d := randomBuffer(t, 24), randomBuffer(t, 30), poisoned(t, 20)
	defer a.Close()
	defer b.Close()
	defer d.Close()
	if err = plan.Execute(a, b, nil, d, nil, nil, 0); !errors.As(err, &de) || de.Status != StatusInvalidArgument {
		t.Fatalf("missing bias: %v", err)
	}
	for i, v := range d.Float32s() {
		if !math.IsNaN(float64(v)) {
			t.Fatalf("D[%d] written by a failing call", i)
		}
	}
	// A host buffer too small for the plan is refused before the library is called.
	small := randomBuffer(t, 23)
	defer small.Close()
	if err = plan.Execute(small, b, nil, d, &ExecArgs{Bias: a}, nil, 0); !errors.As(err, &de) || !strings.Contains(de.Message, "a holds") {
		t.Fatalf("short buffer: %v", err)
	}
	// The context cannot close under a live plan.
	if err = ctx.Close(); !errors.As(err, &de) || de.Status != StatusInvalidArgument {
		t.Fatalf("close with a live plan: %v", err)
	}
	if err = plan.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err = NewContext(DeviceCUDA, 4096); !errors.As(err, &de) || de.Status != StatusNoDevice {
		t.Fatalf("CUDA device 4096: %v", err)
	}
}

// TestInt8ScaleZeroPointAndDeviceScalars: an F32 GEMM with an I8 output, a per-row scale and zero
// point, and alpha read through a pointer (DGEMM_SCALARS_DEVICE; host memory on the CPU backend).
// Integer inputs keep every sum exact, so the output is checked bit for bit against deepgemm.h's
// rule: round half to even, add the zero point, saturate to [-128, 127].
func TestInt8ScaleZeroPointAndDeviceScalars(t *testing.T) {
	ctx := cpuContext(t)
	m, n, k := 9, 11, 5
	p := NewProblem(int64(m), int64(n), int64(k), F32)
	p.CType, p.DType = I8, I8
	e := NewEpilogue()
	e.ScaleMode, e.ZeroPoint = VectorPerRow, true
	plan, err := ctx.NewPlan(p, &e, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	a, b := randomBuffer(t, m*k), randomBuffer(t, k*n)
	defer a.Close()
	defer b.Close()
	for _, buf := range []*HostBuffer{a, b} {
		for i := range buf.Float32s() {
			buf.Float32s()[i] = float32(rng.Intn(13) - 6)
		}
	}
	scale, _ := NewHostBuffer(4 * m)
	zero, _ := NewHostBuffer(4 * m)
	alpha, _ := NewHostBuffer(4)
	d, _ := NewHostBuffer(m * n)
	defer scale.Close()
	defer zero.Close()
	defer alpha.Close()
	defer d.Close()
	scales := []float32{0.25, 0.5, 1.5, 4}
	for i := 0; i < m; i++ {
		scale.Float32s()[i] = scales[rng.Intn(len(scales))]
		zero.Int32s()[i] = int32(rng.Intn(41) - 20)
	}
	alpha.Float32s()[0] = 0.5
	for i := range d.Int8s() {
		d.Int8s()[i] = 99 // poisoned
	}
	args := &ExecArgs{AlphaPtr: alpha, Scale: scale, ZeroPoint: zero}
	if err := plan.Execute(a, b, nil, d, args, nil, 0); err != nil {
		t.Fatal(err)
	}
	ref := reference(a.Float32s(), b.Float32s(), nil, m, n, k, false, false, 0.5, nil)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			v := math.RoundToEven(ref[i*n+j]*float64(scale.Float32s()[i])) + float64(zero.Int32s()[i])
			want := int8(math.Max(-128, math.Min(127, v)))
			if got := d.Int8s()[i*n+j]; got != want {
				t.Fatalf("d[%d,%d] = %d, want %d", i, j, got, want)
			}
		}
	}
	// A scale shorter than the plan reads is refused before the library runs; a missing zero
	// point is the library's INVALID_ARGUMENT.
	short, _ := NewHostBuffer(4 * (m - 1))
	defer short.Close()
	var de *Error
	err = plan.Execute(a, b, nil, d, &ExecArgs{Scale: short, ZeroPoint: zero}, nil, 0)
	if !errors.As(err, &de) || de.Status != StatusInvalidArgument {
		t.Fatalf("short scale: %v", err)
	}
	err = plan.Execute(a, b, nil, d, &ExecArgs{Scale: scale}, nil, 0)
	if !errors.As(err, &de) || de.Status != StatusInvalidArgument || !strings.Contains(de.Message, "zero_point") {
		t.Fatalf("missing zero point: %v", err)
	}
}

// A masked grouped GEMM (mixture of experts): each group's first counts[g] rows against its own
// B and bias; rows past a count keep their poison; the status word reads 0; a bad count is the
// library's INVALID_ARGUMENT on the CPU.
func TestGroupedMasked(t *testing.T) {
	ctx := cpuContext(t)
	groups, m, n, k := 3, 10, 6, 5
	p := NewProblem(int64(m), int64(n), int64(k), F32)
	p.TransB = true
	p.BatchCount = int64(groups)
	p.StrideA, p.StrideB, p.StrideD = int64(m*k), int64(n*k), int64(m*n)
	e := NewEpilogue()
	e.BiasMode, e.BiasType, e.Activation = VectorPerColumn, F32, ActGELUErf
	plan, err := ctx.NewPlan(p, &e, &PlanOptions{Grouped: &Grouping{Layout: GroupMasked}})
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	a, b, bias, d := randomBuffer(t, groups*m*k), randomBuffer(t, groups*n*k), randomBuffer(t, groups*n),
		poisoned(t, groups*m*n)
	counts, _ := NewHostBuffer(4 * groups)
	status, _ := NewHostBuffer(4)
	copy(counts.Int32s(), []int32{10, 0, 4})
	status.Int32s()[0] = -1
	if err := plan.Execute(a, b, nil, d, &ExecArgs{Bias: bias, GroupRows: counts, GroupStatus: status}, nil, 0); err != nil {
		t.Fatal(err)
	}
	if status.Int32s()[0] != 0 {
		t.Errorf("status word %d", status.Int32s()[0])
	}
	for g, rows := range counts.Int32s() {
		out := d.Float32s()[g*m*n : (g+1)*m*n]
		ref := reference(a.Float32s()[g*m*k:(g+1)*m*k], b.Float32s()[g*n*k:(g+1)*n*k], bias.Float32s()[g*n:(g+1)*n],
			int(rows), n, k, false, true, 1, gelu)
		if rel := relError(t, out[:int(rows)*n], ref); rel > 1e-5 {
			t.Errorf("group %d: relative error %g", g, rel)
		}
		for i, v := range out[int(rows)*n:] {
			if !math.IsNaN(float64(v)) {
				t.Fatalf("group %d: element %d past its %d rows was written", g, i, rows)
			}
		}
	}
	counts.Int32s()[1] = 11
	err = plan.Execute(a, b, nil, d, &ExecArgs{Bias: bias, GroupRows: counts}, nil, 0)
	var de *Error
	if !errors.As(err, &de) || de.Status != StatusInvalidArgument || !strings.Contains(de.Message, "counts[1] = 11") {
		t.Fatalf("bad count: %v", err)
	}
	if err := plan.Execute(a, b, nil, d, &ExecArgs{Bias: bias}, nil, 0); err == nil {
		t.Fatal("a grouped plan ran without its row counts")
	}
}

// Both DGEMM_1.1 extensions in one chain (C memory, linked by extChain): a grouped plan with
// scaling runs on the CPU (one A scale per group: group g's at g, Stride 1), and equals the plain
// grouped plan's D times each group's scale; a grouped plan without scaling refuses scale tensors,
// a scaled plan group rows.
func TestGroupedWithScaling(t *testing.T) {
	ctx := cpuContext(t)
	p := NewProblem(8, 4, 4, F32)
	p.BatchCount, p.StrideA, p.StrideB, p.StrideD = 2, 32, 16, 32
	p.Scaling = &Scaling{A: Scale{Mode: ScalePerTensor, Stride: 1}}
	scaledGrouped, err := ctx.NewPlan(p, nil, &PlanOptions{Grouped: &Grouping{Layout: GroupMasked}})
	if err != nil {
		t.Fatalf("grouped and scaled: %v", err)
	}
	defer scaledGrouped.Close()
	p.Scaling = nil
	grouped, err := ctx.NewPlan(p, nil, &PlanOptions{Grouped: &Grouping{Layout: GroupMasked}})
	if err != nil {
		t.Fatal(err)
	}
	defer grouped.Close()
	a, b, d := randomBuffer(t, 64), randomBuffer(t, 32), poisoned(t, 64)
	counts, _ := NewHostBuffer(8)
	counts.Int32s()[0], counts.Int32s()[1] = 3, 8
	scale, _ := NewHostBuffer(8)
	scale.Float32s()[0], scale.Float32s()[1] = 2, 0.5
	if err := grouped.Execute(a, b, nil, d, &ExecArgs{GroupRows: counts}, nil, 0); err != nil {
		t.Fatal(err)
	}
	ds := poisoned(t, 64)
	if err := scaledGrouped.Execute(a, b, nil, ds, &ExecArgs{GroupRows: counts, AScale: scale}, nil, 0); err != nil {
		t.Fatal(err)
	}
	for g, rows := range []int{3, 8} {
		for i := 0; i < rows*4; i++ {
			want := d.Float32s()[g*32+i] * scale.Float32s()[g]
			if got := ds.Float32s()[g*32+i]; got != want {
				t.Fatalf("group %d element %d: %v, want %v", g, i, got, want)
			}
		}
	}
	var de *Error
	err = grouped.Execute(a, b, nil, d, &ExecArgs{GroupRows: counts, AScale: scale}, nil, 0)
	if !errors.As(err, &de) || de.Status != StatusInvalidArgument || !strings.Contains(de.Message, "no Scaling") {
		t.Fatalf("scale tensors for a grouped plan: %v", err)
	}
	p.BatchCount, p.StrideA, p.StrideB, p.StrideD = 1, 0, 0, 0
	p.Scaling = &Scaling{A: Scale{Mode: ScalePerTensor}}
	scaled, err := ctx.NewPlan(p, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer scaled.Close()
	scale.Float32s()[0] = 1
	err = scaled.Execute(a, b, nil, d, &ExecArgs{AScale: scale, GroupRows: counts}, nil, 0)
	if !errors.As(err, &de) || de.Status != StatusInvalidArgument || !strings.Contains(de.Message, "not grouped") {
		t.Fatalf("group rows for a scaled plan: %v", err)
	}
}

// A grouped problem's planning hint (ExpectedM): part of the plan's description, refused past a
// masked slot's rows.
func TestGroupedExpectedM(t *testing.T) {
	ctx := cpuContext(t)
	p := NewProblem(10, 6, 5, F32)
	p.TransB = true
	p.BatchCount = 3
	p.StrideA, p.StrideB, p.StrideD = 50, 30, 60
	plan, err := ctx.NewPlan(p, nil, &PlanOptions{Grouped: &Grouping{Layout: GroupMasked, ExpectedM: 4}})
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	if s, err := plan.Describe(); err != nil || !strings.Contains(s, "expected_m=4") {
		t.Fatalf("describe = %q, %v: want expected_m=4", s, err)
	}
	var de *Error
	_, err = ctx.NewPlan(p, nil, &PlanOptions{Grouped: &Grouping{Layout: GroupMasked, ExpectedM: 11}})
	if !errors.As(err, &de) || de.Status != StatusInvalidArgument || !strings.Contains(de.Message, "expected_m = 11") {
		t.Fatalf("ExpectedM 11 > m 10: %v", err)
	}
}
