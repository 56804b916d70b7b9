# 中文：部分翻译。缺少的键逐个回退到 en/cli.ftl。
cli-error-label = 错误：{$error}
cli-try-label = 试试：{$hint}
