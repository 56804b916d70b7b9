package gateway

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The go_* families, with the names, types and meanings client_golang's Go collector gave them (dashboards
// are written against those), read from runtime/metrics without stopping the world.

// rmNames are the runtime/metrics samples the go_memstats_* families are sums of, in rm* index order.
var rmNames = [...]string{
	rmHeapObjectsBytes:  "/memory/classes/heap/objects:bytes",
	rmHeapUnused:        "/memory/classes/heap/unused:bytes",
	rmHeapReleased:      "/memory/classes/heap/released:bytes",
	rmHeapFree:          "/memory/classes/heap/free:bytes",
	rmHeapStacks:        "/memory/classes/heap/stacks:bytes",
	rmOSStacks:          "/memory/classes/os-stacks:bytes",
	rmMSpanInuse:        "/memory/classes/metadata/mspan/inuse:bytes",
	rmMSpanFree:         "/memory/classes/metadata/mspan/free:bytes",
	rmMCacheInuse:       "/memory/classes/metadata/mcache/inuse:bytes",
	rmMCacheFree:        "/memory/classes/metadata/mcache/free:bytes",
	rmMetaOther:         "/memory/classes/metadata/other:bytes",
	rmBuckets:           "/memory/classes/profiling/buckets:bytes",
	rmOther:             "/memory/classes/other:bytes",
	rmTotal:             "/memory/classes/total:bytes",
	rmAllocsBytes:       "/gc/heap/allocs:bytes",
	rmAllocsObjects:     "/gc/heap/allocs:objects",
	rmTinyAllocsObjects: "/gc/heap/tiny/allocs:objects",
	rmFreesObjects:      "/gc/heap/frees:objects",
	rmHeapObjects:       "/gc/heap/objects:objects",
	rmHeapGoal:          "/gc/heap/goal:bytes",
	rmGOGC:              "/gc/gogc:percent",
	rmMemLimit:          "/gc/gomemlimit:bytes",
	rmGOMAXPROCS:        "/sched/gomaxprocs:threads",
}

const (
	rmHeapObjectsBytes = iota
	rmHeapUnused
	rmHeapReleased
	rmHeapFree
	rmHeapStacks
	rmOSStacks
	rmMSpanInuse
	rmMSpanFree
	rmMCacheInuse
	rmMCacheFree
	rmMetaOther
	rmBuckets
	rmOther
	rmTotal
	rmAllocsBytes
	rmAllocsObjects
	rmTinyAllocsObjects
	rmFreesObjects
	rmHeapObjects
	rmHeapGoal
	rmGOGC
	rmMemLimit
	rmGOMAXPROCS
	rmCount
)

// rmFamily is a go_* family whose value is the sum of runtime/metrics samples.
type rmFamily struct {
	name, typ, help string
	sum             []int // rm* indexes
}

// rmFamilies are table-driven: written out as one literal each they were 13 KB of code.
var rmFamilies = [...]rmFamily{
	{"go_gc_gogc_percent", "gauge", "Heap size target percentage configured by the user, otherwise 100. This value is set by the GOGC environment variable, and the runtime/debug.SetGCPercent function. Sourced from /gc/gogc:percent.", []int{rmGOGC}},
	{"go_gc_gomemlimit_bytes", "gauge", "Go runtime memory limit configured by the user, otherwise math.MaxInt64. This value is set by the GOMEMLIMIT environment variable, and the runtime/debug.SetMemoryLimit function. Sourced from /gc/gomemlimit:bytes.", []int{rmMemLimit}},
	{"go_memstats_alloc_bytes", "gauge", "Number of bytes allocated in heap and currently in use. Equals to /memory/classes/heap/objects:bytes.", []int{rmHeapObjectsBytes}},
	{"go_memstats_alloc_bytes_total", "counter", "Total number of bytes allocated in heap until now, even if released already. Equals to /gc/heap/allocs:bytes.", []int{rmAllocsBytes}},
	{"go_memstats_buck_hash_sys_bytes", "gauge", "Number of bytes used by the profiling bucket hash table. Equals to /memory/classes/profiling/buckets:bytes.", []int{rmBuckets}},
	{"go_memstats_frees_total", "counter", "Total number of heap objects frees. Equals to /gc/heap/frees:objects + /gc/heap/tiny/allocs:objects.", []int{rmFreesObjects, rmTinyAllocsObjects}},
	{"go_memstats_gc_sys_bytes", "gauge", "Number of bytes used for garbage collection system metadata. Equals to /memory/classes/metadata/other:bytes.", []int{rmMetaOther}},
	{"go_memstats_heap_alloc_bytes", "gauge", "Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes. Equals to /memory/classes/heap/objects:bytes.", []int{rmHeapObjectsBytes}},
	{"go_memstats_heap_idle_bytes", "gauge", "Number of heap bytes waiting to be used. Equals to /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", []int{rmHeapReleased, rmHeapFree}},
	{"go_memstats_heap_inuse_bytes", "gauge", "Number of heap bytes that are in use. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes", []int{rmHeapObjectsBytes, rmHeapUnused}},
	{"go_memstats_heap_objects", "gauge", "Number of currently allocated objects. Equals to /gc/heap/objects:objects.", []int{rmHeapObjects}},
	{"go_memstats_heap_released_bytes", "gauge", "Number of heap bytes released to OS. Equals to /memory/classes/heap/released:bytes.", []int{rmHeapReleased}},
	{"go_memstats_heap_sys_bytes", "gauge", "Number of heap bytes obtained from system. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes + /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", []int{rmHeapObjectsBytes, rmHeapUnused, rmHeapReleased, rmHeapFree}},
	{"go_memstats_mallocs_total", "counter", "Total number of heap objects allocated, both live and gc-ed. Semantically a counter version for go_memstats_heap_objects gauge. Equals to /gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects.", []int{rmAllocsObjects, rmTinyAllocsObjects}},
	{"go_memstats_mcache_inuse_bytes", "gauge", "Number of bytes in use by mcache structures. Equals to /memory/classes/metadata/mcache/inuse:bytes.", []int{rmMCacheInuse}},
	{"go_memstats_mcache_sys_bytes", "gauge", "Number of bytes used for mcache structures obtained from system. Equals to /memory/classes/metadata/mcache/inuse:bytes + /memory/classes/metadata/mcache/free:bytes.", []int{rmMCacheInuse, rmMCacheFree}},
	{"go_memstats_mspan_inuse_bytes", "gauge", "Number of bytes in use by mspan structures. Equals to /memory/classes/metadata/mspan/inuse:bytes.", []int{rmMSpanInuse}},
	{"go_memstats_mspan_sys_bytes", "gauge", "Number of bytes used for mspan structures obtained from system. Equals to /memory/classes/metadata/mspan/inuse:bytes + /memory/classes/metadata/mspan/free:bytes.", []int{rmMSpanInuse, rmMSpanFree}},
	{"go_memstats_next_gc_bytes", "gauge", "Number of heap bytes when next garbage collection will take place. Equals to /gc/heap/goal:bytes.", []int{rmHeapGoal}},
	{"go_memstats_other_sys_bytes", "gauge", "Number of bytes used for other system allocations. Equals to /memory/classes/other:bytes.", []int{rmOther}},
	{"go_memstats_stack_inuse_bytes", "gauge", "Number of bytes obtained from system for stack allocator in non-CGO environments. Equals to /memory/classes/heap/stacks:bytes.", []int{rmHeapStacks}},
	{"go_memstats_stack_sys_bytes", "gauge", "Number of bytes obtained from system for stack allocator. Equals to /memory/classes/heap/stacks:bytes + /memory/classes/os-stacks:bytes.", []int{rmHeapStacks, rmOSStacks}},
	{"go_memstats_sys_bytes", "gauge", "Number of bytes obtained from system. Equals to /memory/classes/total:byte.", []int{rmTotal}},
	{"go_sched_gomaxprocs_threads", "gauge", "The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously. Sourced from /sched/gomaxprocs:threads.", []int{rmGOMAXPROCS}},
}

// runtimeFamilies reads the Go runtime's state once.
func runtimeFamilies() []family {
	samples := make([]metrics.Sample, rmCount)
	for i := range samples {
		samples[i].Name = rmNames[i]
	}
	metrics.Read(samples)
	rm := func(i int) float64 {
		switch samples[i].Value.Kind() {
		case metrics.KindUint64:
			return float64(samples[i].Value.Uint64())
		case metrics.KindFloat64:
			return samples[i].Value.Float64()
		}
		return 0 // a name this Go release does not know
	}

	var gc debug.GCStats
	gc.PauseQuantiles = make([]time.Duration, 5)
	debug.ReadGCStats(&gc)
	pauses := family{name: "go_gc_duration_seconds", typ: "summary",
		help: "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles."}
	for i, q := range []string{"0", "0.25", "0.5", "0.75", "1"} {
		pauses.add(gc.PauseQuantiles[i].Seconds(), "quantile", q)
	}
	pauses.samples = append(pauses.samples, sample{suffix: "_sum", value: gc.PauseTotal.Seconds()},
		sample{suffix: "_count", value: float64(gc.NumGC)})
	threads, _ := runtime.ThreadCreateProfile(nil)

	fams := make([]family, 0, len(rmFamilies)+5)
	fams = append(fams, pauses,
		family{name: "go_goroutines", typ: "gauge", help: "Number of goroutines that currently exist.",
			samples: []sample{{value: float64(runtime.NumGoroutine())}}},
		family{name: "go_info", typ: "gauge", help: "Information about the Go environment.",
			samples: []sample{{labels: []string{"version", runtime.Version()}, value: 1}}},
		family{name: "go_memstats_last_gc_time_seconds", typ: "gauge", help: "Number of seconds since 1970 of last garbage collection.",
			samples: []sample{{value: float64(gc.LastGC.UnixNano()) / 1e9}}},
		family{name: "go_threads", typ: "gauge", help: "Number of OS threads created.", samples: []sample{{value: float64(threads)}}})
	for _, f := range rmFamilies {
		var v float64
		for _, i := range f.sum {
			v += rm(i)
		}
		fams = append(fams, family{name: f.name, typ: f.typ, help: f.help, samples: []sample{{value: v}}})
	}
	return fams
}
