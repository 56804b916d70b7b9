// The shapes upstream's web dashboard (zeroclaw-labs/zeroclaw, web/) parses the gateway's answers with, reduced
// to the fields it reads. Written here from reading upstream's web/src/types/api.ts ("types") and
// web/src/lib/api.ts ("lib"); no upstream code is copied. Kept in step with the Go table dashTypes in
// internal/gateway/dashboard_contract_test.go.

// types: StatusResponse, HealthSnapshot, ComponentHealth, ProcessStats
export interface StatusResponse {
  version?: string;
  model_provider: string | null;
  model: string;
  temperature: number;
  uptime_seconds: number;
  daemon_started_at?: string;
  gateway_port: number;
  locale: string;
  memory_backend: string;
  paired: boolean;
  channels: Record<string, boolean>;
  health: HealthSnapshot;
  process?: ProcessStats;
  check_updates?: boolean;
  allow_self_upgrade?: boolean;
  restart_mode?: "supervised" | "self_respawn" | "manual";
  restart_hint?: string;
}
export interface HealthSnapshot {
  pid: number;
  updated_at: string;
  uptime_seconds: number;
  components: Record<string, ComponentHealth>;
}
export interface ComponentHealth {
  status: string;
  updated_at: string;
  last_ok: string | null;
  last_error: string | null;
  restart_count: number;
}
export interface ProcessStats {
  rss_bytes: number;
  system_ram_total_bytes: number;
  cpu_percent: number | null;
  num_cpus: number;
}

// crates/zeroclaw-gateway/src/version.rs VersionCheckResponse (lib: the generated type)
export interface VersionCheckResponse {
  current_version: string;
  latest_version: string | null;
  is_newer: boolean;
  release_url?: string;
  release_notes?: string;
  published_at?: string;
  error?: string;
}

// lib: getConfigDrift, DriftEntry, getReloadStatus
export interface DriftEntry {
  path: string;
  secret?: boolean;
  drifted: boolean;
  in_memory_value?: unknown;
  on_disk_value?: unknown;
}
export interface DriftResponse {
  drifted: DriftEntry[];
}
export interface ReloadStatusResponse {
  pending_reload: boolean;
}

// lib: AgentOptionsResponse
export interface AgentOptionsResponse {
  channels: string[];
  channel_types: string[];
  model_providers: string[];
  risk_profiles: string[];
  runtime_profiles: string[];
  skill_bundles: string[];
  knowledge_bundles: string[];
  mcp_bundles: string[];
  agents: string[];
  memory_namespaces?: string[];
}

// types: ToolSpec, CliTool, Integration (lib's getTools, getCliTools, getIntegrations read the wrapped forms)
export interface ToolSpec {
  name: string;
  description: string;
  parameters: any;
  output?: any;
  param_domains?: Record<string, string>;
}
export interface ToolsResponse {
  tools: ToolSpec[];
}
export interface CliTool {
  name: string;
  path: string;
  version: string | null;
  category: string;
}
export interface CliToolsResponse {
  cli_tools: CliTool[];
}
export interface Integration {
  name: string;
  description: string;
  category: string;
  category_label: string;
  status: "Available" | "Active";
}
export interface IntegrationsResponse {
  integrations: Integration[];
}

// web/src/pages/Canvas.tsx
export interface CanvasList {
  canvases: string[];
}

// lib: listSlashOptionKinds, listAgentSkills, AgentSkillEntry, ShadowedSkillEntry, DroppedSkillEntry
export interface SlashOptionKinds {
  kinds: unknown[];
}
export interface ShadowedSkillEntry {
  name: string;
  origin: string;
}
export interface DroppedSkillEntry {
  name: string;
  origin: string;
  reason_kind: string;
  reason: string;
  directory?: string | null;
}
export interface AgentSkillEntry {
  name: string;
  description: string;
  origin: "workspace" | "open-skills" | "plugin" | "bundle";
  plugin?: string | null;
  bundle?: string | null;
  directory?: string | null;
  editable: boolean;
  shadowed?: ShadowedSkillEntry[];
}
export interface AgentSkills {
  agent: string;
  skills: AgentSkillEntry[];
  dropped?: DroppedSkillEntry[];
}

// types: SessionMessagesResponse, SessionMessageRow
export interface SessionMessageRow {
  role: string;
  content: string;
  created_at: string | null;
}
export interface SessionMessagesResponse {
  session_id: string;
  messages: SessionMessageRow[];
  session_persistence: boolean;
}

// lib: ListResponse, ListResponseEntry, PatchResponse, PatchOpResult, MapKeysResponse, PickerResponse, PickerItem
export interface ListResponseEntry {
  path: string;
  category: string;
  kind: string;
  type_hint: string;
  value?: unknown;
  populated: boolean;
  is_secret: boolean;
  enum_variants?: string[];
  alias_source?: string;
  section?: string;
  tab?: string;
  multiline?: boolean;
}
export interface ListResponse {
  entries: ListResponseEntry[];
  drifted?: DriftEntry[];
}
export interface PatchOpResult {
  op: string;
  path: string;
  value?: unknown;
  populated?: boolean;
  comment?: string;
}
export interface PatchResponse {
  saved: boolean;
  results: PatchOpResult[];
  warnings?: { code: string; message: string; path: string }[];
}
export interface MapKeysResponse {
  path: string;
  keys: string[];
}
export interface PickerItem {
  key: string;
  label: string;
  description?: string;
  badge?: string;
}
export interface PickerResponse {
  section: string;
  items: PickerItem[];
  help: string;
}

// lib: BrowseResponse, BrowseEntry, AgentWorkspaceFileRead
export interface BrowseEntry {
  name: string;
  kind: "dir" | "file";
  size?: number;
  protected?: boolean;
}
export interface BrowseResponse {
  path: string;
  entries: BrowseEntry[];
}
export interface AgentWorkspaceFileRead {
  path: string;
  size: number;
  is_text: boolean;
  content: string;
  encoding: "utf8" | "base64";
}

// lib: DeletePlanRefSite, DeletePlan (getDeletePlan), initSection's {initialized}, ConfigApiError (what apiFetch
// reads as a structured error); crates/zeroclaw-gateway/src/api_config.rs MigrateResponse (no dashboard caller)
export interface DeletePlanRefSite {
  path: string;
  raw_value: string;
}
export interface DeletePlan {
  path: string;
  key: string;
  allowed: boolean;
  blockers: DeletePlanRefSite[];
  scrubs: DeletePlanRefSite[];
  live_acp_sessions?: number | null;
  cascades_owned_state: boolean;
}
export interface InitResponse {
  initialized: string[];
}
export interface MigrateResponse {
  migrated: boolean;
  backup_path?: string;
  schema_version: number;
}
export interface ConfigApiError {
  code: string;
  message: string;
  path?: string;
  op_index?: number;
}

// lib: mkdirShared's { created: string }, rmdirShared's { removed: string }
export interface BrowseMkdirResponse {
  created: string;
}
export interface BrowseRmdirResponse {
  removed: string;
}

// types: SSEEvent (type, timestamp?, any other field); crates/zeroclaw-gateway/src/sse.rs: the history is
// { events: [...] } of the same frames
export interface SSEEvent {
  type: string;
  timestamp?: string;
  [key: string]: any;
}
export interface EventsHistoryResponse {
  events: SSEEvent[];
}
