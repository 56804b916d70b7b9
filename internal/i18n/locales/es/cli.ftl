# Español: parcial. Lo que falta aquí se toma de en/cli.ftl clave por clave.
cli-error-label = Error: {$error}
cli-try-label = Pruebe: {$hint}
cli-doctor-summary = {$ok} bien, {$warnings} avisos, {$errors} errores
chat-approval-prompt = ¿Permitir? [s]í / [n]o / [a] siempre:
chat-approval-yes = s,sí,si
chat-approval-always = a,siempre
