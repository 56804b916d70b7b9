# 日本語: 一部のみ。ここにないキーは en/cli.ftl から取られる。
cli-error-label = エラー: {$error}
cli-try-label = 試してください: {$hint}
