package upstream

import (
	"fmt"
	"strings"
)

// restructureCron is the v2 → v3 cron step: the cron.jobs list becomes the tables [cron.<key>] (the job's name
// slugified, else its id, else job_<n>), and the subsystem settings go to the second table returned, [scheduler].
func (m *migration) restructureCron(v any) (tree, tree) {
	jobs, scheduler := tree{}, tree{}
	ct, ok := asTree(v)
	if !ok {
		return jobs, scheduler
	}
	if list, ok := take(ct, "jobs"); ok {
		if arr, ok := list.([]any); ok {
			for i, job := range arr {
				jt, isTable := asTree(job)
				key := fmt.Sprintf("job_%d", i+1)
				if n, ok := jt["name"].(string); ok {
					key = slugify(n)
				} else if id, ok := jt["id"].(string); ok {
					key = id
				}
				key = uniqueKey(jobs, key)
				if isTable {
					delete(jt, "id")
					if d, ok := asTree(jt["delivery"]); ok {
						if c, ok := d["channel"].(string); ok && !strings.Contains(c, ".") {
							d["channel"] = c + ".default"
						}
					}
				}
				jobs[key] = job
			}
		}
	}
	for _, k := range []string{"enabled", "catch_up_on_startup", "max_run_history"} {
		if v, ok := take(ct, k); ok {
			scheduler[k] = v
		}
	}
	if len(ct) > 0 {
		m.warn("[cron] keys dropped (not in schema v3): %s", strings.Join(sortedKeys(ct), ", "))
	}
	m.note("[cron] jobs moved to [cron.<name>], subsystem settings to [scheduler]")
	return jobs, scheduler
}
