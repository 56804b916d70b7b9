package api

// StorageStatus is status.storage: the [storage] backend, and with a shared (PostgreSQL) backend this daemon's
// holder id, the daemons seen on the database recently and the work claims running. Absent with sqlite.
type StorageStatus struct {
	Backend string        `json:"backend"` // sqlite | postgres.<alias>
	Holder  string        `json:"holder,omitempty"`
	Peers   []StoragePeer `json:"peers,omitempty"`
	Claims  int           `json:"claims"`          // work slots running (every daemon's)
	Leases  int           `json:"leases"`          // named leases held (every daemon's)
	Error   string        `json:"error,omitempty"` // why peers and claims could not be read
}

// StoragePeer is one daemon seen on a shared database.
type StoragePeer struct {
	Holder  string `json:"holder"`
	Host    string `json:"host"`
	PID     int    `json:"pid"`
	Version string `json:"version"`
	SeenAt  string `json:"seen_at"` // RFC 3339
}
