package upstream

import (
	"slices"
	"strings"
)

// The v2 → v3 channel step: every [channels.<type>] block is wrapped under an alias, with the per-type folds
// and the peer lists that become [peer_groups].

// v3ChannelTypes are the channel types of upstream's schema v3.
var v3ChannelTypes = []string{"telegram", "discord", "slack", "mattermost", "webhook", "imessage", "matrix", "signal",
	"whatsapp", "linq", "nextcloud_talk", "email", "gmail_push", "irc", "twitch", "lark", "line", "dingtalk", "wecom",
	"wecom_ws", "wechat", "qq", "twitter", "mochat", "nostr", "clawdtalk", "reddit", "bluesky", "git", "voice_call",
	"voice_wake", "voice_duplex", "mqtt", "amqp", "filesystem"}

func (m *migration) aliasWrapChannels(v any, peerGroups tree) tree {
	ch, ok := asTree(v)
	out := tree{}
	if !ok {
		return out
	}
	if cli, ok := take(ch, "cli"); ok {
		out["cli"] = cli
	}
	m.foldDiscordHistory(ch)
	var feishu tree
	if f, ok := take(ch, "feishu"); ok {
		if ft, isTable := asTree(f); isTable {
			feishu = ft
		} else {
			m.warn("[channels.feishu] dropped: it is not a table")
		}
	}
	for _, ct := range v3ChannelTypes {
		val, ok := take(ch, ct)
		if !ok {
			continue
		}
		inst, isTable := asTree(val)
		if !isTable {
			out[ct] = tree{"default": val}
			continue
		}
		m.channelFolds(ct, inst)
		m.foldPeerAuth(ct, inst, peerGroups)
		out[ct] = tree{"default": inst}
	}
	for k, v := range ch {
		out[k] = v
	}
	if feishu != nil {
		feishu["use_feishu"] = true
		lark := subtree(out, "lark")
		switch {
		case lark == nil:
			m.warn("[channels.lark] is not a table: [channels.feishu] dropped")
		case lark["feishu"] != nil:
			m.warn("[channels.lark.feishu] already exists: [channels.feishu] dropped")
		default:
			lark["feishu"] = feishu
			m.note("[channels.feishu] moved to [channels.lark.feishu]")
		}
	}
	return out
}

func (m *migration) foldDiscordHistory(ch tree) {
	hist, ok := take(ch, "discord_history")
	if !ok {
		return
	}
	ht, _ := asTree(hist)
	d, _ := asTree(ch["discord"])
	dTok, dHas := d["bot_token"].(string)
	hTok, hHas := ht["bot_token"].(string)
	conflict := dHas && hHas && dTok != hTok
	hEnabled, _ := ht["enabled"].(bool)
	dEnabled, _ := d["enabled"].(bool)
	disc := subtree(ch, "discord")
	if disc != nil {
		disc["archive"] = true
		for k, v := range ht {
			if k != "enabled" {
				orInsert(disc, k, v)
			}
		}
		disc["enabled"] = dEnabled || hEnabled
	}
	m.note("[channels.discord_history] folded into [channels.discord] with archive = true")
	if conflict {
		m.warn("channels.discord_history.bot_token differed from channels.discord.bot_token: the discord_history token was dropped")
	}
}

func (m *migration) channelFolds(ct string, inst tree) {
	switch ct {
	case "discord":
		foldStringIntoArray(inst, "guild_id", "guild_ids")
	case "mattermost":
		foldStringIntoArray(inst, "channel_id", "channel_ids")
	case "reddit":
		foldStringIntoArray(inst, "subreddit", "subreddits")
	case "signal":
		v, ok := inst["group_id"].(string)
		if !ok {
			return
		}
		delete(inst, "group_id")
		if v == "" {
			return
		}
		if v == "dm" {
			inst["dm_only"] = true
			return
		}
		arr, _ := inst["group_ids"].([]any)
		if _, exists := inst["group_ids"]; exists && arr == nil {
			return
		}
		if !slices.ContainsFunc(arr, func(x any) bool { return x == v }) {
			inst["group_ids"] = append(arr, v)
		}
	}
}

func peerAuthField(ct string) string {
	switch ct {
	case "telegram", "discord", "slack", "mattermost", "matrix", "nextcloud_talk", "irc", "lark", "line", "feishu",
		"dingtalk", "wecom", "wechat", "qq", "twitter", "mochat":
		return "allowed_users"
	case "imessage":
		return "allowed_contacts"
	case "signal":
		return "allowed_from"
	case "whatsapp":
		return "allowed_numbers"
	case "linq", "email", "gmail_push":
		return "allowed_senders"
	case "nostr":
		return "allowed_pubkeys"
	}
	return ""
}

func (m *migration) foldPeerAuth(ct string, inst, peerGroups tree) {
	field := peerAuthField(ct)
	if field == "" {
		return
	}
	v, ok := take(inst, field)
	if !ok {
		return
	}
	arr, ok := v.([]any)
	if !ok {
		return
	}
	var peers []any
	for _, x := range arr {
		if s, ok := x.(string); ok {
			if s = strings.TrimSpace(s); s != "" && s != "*" {
				peers = append(peers, s)
			}
		}
	}
	if len(peers) == 0 {
		return
	}
	name := ct + "_default"
	if _, exists := peerGroups[name]; exists {
		return
	}
	peerGroups[name] = tree{"channel": ct, "agents": []any{"default"}, "external_peers": peers}
	m.note("channels.%s.%s moved to [peer_groups.%s]", ct, field, name)
}
