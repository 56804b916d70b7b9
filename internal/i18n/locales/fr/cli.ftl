# Français : complet (TestCatalogComplete vérifie chaque clé de en/cli.ftl). Les commandes, chemins et noms
# de propriétés restent tels quels.

## zeroclaw doctor : constats et corrections
doctor-key-symlink = {$path} est un lien symbolique : la clé est refusée
doctor-key-symlink-fix = remplacez le lien par le fichier de la clé lui-même : cp --remove-destination "$(readlink -f {$path})" {$path}
doctor-dir-mode = {$path} a le mode {$mode} : d'autres utilisateurs peuvent en lister le contenu
doctor-file-mode = {$path} a le mode {$mode} : d'autres utilisateurs peuvent le lire
doctor-modes-ok = la configuration, la clé et les fichiers de données sont privés
doctor-db-fix = arrêtez le démon (zeroclaw stop), puis restaurez le fichier depuis une sauvegarde (zeroclaw restore FICHIER.tar.gz), ou récupérez ce qui est lisible : sqlite3 {$path} .recover | sqlite3 {$path}.recovered, puis mettez-le à sa place
doctor-db-empty = {$path} : vide (une base SQLite dans laquelle rien n'a encore été écrit)
doctor-db-not-sqlite = {$path} n'est pas une base SQLite (son en-tête est incorrect)
doctor-db-unreadable = {$path} ne peut pas être vérifié : {$error}
doctor-db-corrupt = {$path} est corrompu : {$problems}
doctor-db-ok = {$path} : intégrité correcte
doctor-receipts-unreadable = les reçus d'import JSONL ne peuvent pas être lus : {$error}
doctor-receipts-unreadable-fix = voir le constat sur la base {$path}
doctor-next-start = démarrez le démon : zeroclaw daemon
doctor-next-restart = redémarrez le démon (zeroclaw stop, puis zeroclaw daemon) : les imports ont lieu au démarrage
doctor-archive-unreadable = {$path} ne peut pas être lu : {$error}
doctor-archive-mismatch = {$path} diffère de son reçu d'import ({$size} octets, sha256 {$sum} ; reçu : {$receipt_size} octets, {$receipt_sum}) : le démon le refuse
doctor-archive-mismatch-fix = les messages sont déjà dans sessions.db : sortez {$path} de {$dir} (gardez-le s'il contient autre chose)
doctor-archive-missing = {$name} a été importé (session {$session}) mais son archive {$path} a disparu
doctor-archive-missing-fix = rien n'est perdu : les messages sont dans sessions.db ; remettez le fichier d'origine sous le nom {$path} si vous l'avez encore
doctor-importing-ambiguous = {$name} et {$staged} existent tous les deux : l'import ne peut pas savoir lequel est à jour
doctor-importing-ambiguous-fix = comparez les deux fichiers, gardez le bon sous le nom {$name} et sortez l'autre de {$dir}
doctor-importing-mismatch = {$path} diffère du reçu déjà enregistré pour lui
doctor-importing-mismatch-fix = les messages du reçu sont dans sessions.db : sortez {$path} de {$dir}
doctor-importing-handoff = {$path} a été importé mais son passage à {$name}.migrated a été interrompu
doctor-importing-handoff-fix = {$next} : il termine le passage sans dupliquer de messages
doctor-importing-orphan = {$path} reste d'un import interrompu
doctor-importing-orphan-fix = {$next} : il importe le fichier
doctor-receipts-ok = { $count ->
    [one] {$count} session JSONL importée correspond à son archive
   *[other] {$count} sessions JSONL importées correspondent à leurs archives
}
doctor-config-missing = {$path} n'existe pas
doctor-config-missing-fix = démarrez le démon une fois (zeroclaw daemon) : il écrit une configuration par défaut avec le fournisseur echo hors ligne
doctor-config-unreadable = {$path} ne peut pas être lu : {$error}
doctor-config-invalid-fix = corrigez l'endroit indiqué ci-dessus dans {$path}, puis vérifiez avec : zeroclaw config validate
doctor-config-entry-disabled = {$problem} : l'entrée est désactivée au démarrage
doctor-config-entry-disabled-fix = modifiez {$file} (ou zeroclaw config set/delete {$property}), puis : zeroclaw config validate
doctor-config-warning-fix = modifiez {$path} comme l'indique l'avertissement ; zeroclaw config validate liste ce qui reste
doctor-config-ok = {$path} se charge sans problème
doctor-key-missing = { $count ->
    [one] {$count} valeur chiffrée ({$fields}) mais {$path} n'existe pas : elle est illisible
   *[other] {$count} valeurs chiffrées ({$fields}) mais {$path} n'existe pas : elles sont illisibles
}
doctor-key-missing-fix = restaurez depuis une sauvegarde la .secret_key qui les a chiffrées (zeroclaw restore), ou redéfinissez chaque valeur : zeroclaw config set {$field} VALEUR
doctor-key-invalid-fix = restaurez {$path} depuis une sauvegarde : 64 caractères hexadécimaux, un fichier ordinaire, mode 0600
doctor-key-wrong = {$path} ne peut pas déchiffrer {$fields} : ce n'est pas la clé qui les a chiffrées, ou les valeurs sont abîmées
doctor-key-wrong-fix = restaurez la bonne .secret_key depuis une sauvegarde, ou redéfinissez chaque valeur : zeroclaw config set {$field} VALEUR
doctor-secrets-ok = { $count ->
    [one] {$count} valeur chiffrée s'ouvre avec {$path}
   *[other] {$count} valeurs chiffrées s'ouvrent avec {$path}
}
doctor-lock-unreadable = impossible de savoir si un démon tourne : {$error}
doctor-lock-unreadable-fix = supprimez {$path} si ce n'est pas un fichier ordinaire qui vous appartient, puis redémarrez le démon
doctor-daemon-live = un démon (pid {$pid}) détient {$path}
doctor-lock-stale = aucun démon ne tourne ; {$path} est un reste sans danger du pid {$pid}
doctor-daemon-stopped = aucun démon ne tourne
doctor-endpoint-foreign = le pid {$pid} sert {$path} mais aucun démon ne détient le verrou de cette installation : il appartient à une autre installation
doctor-endpoint-foreign-fix = donnez à cette installation son propre socket (unset ZEROCLAW_SOCKET) ou arrêtez l'autre démon : zeroclaw stop
doctor-socket-missing = un démon tourne mais son socket {$path} a disparu : les clients ne peuvent pas le joindre
doctor-socket-missing-fix = redémarrez le démon : kill {$pid} (zeroclaw stop ne peut pas le joindre), puis zeroclaw daemon
doctor-socket-not-socket = {$path} n'est pas un socket : le démon ne peut pas y écouter
doctor-socket-not-socket-fix = déplacez {$path} ailleurs, puis démarrez le démon
doctor-socket-foreign-owner = {$path} appartient à l'uid {$uid}, pas à vous (uid {$me})
doctor-socket-foreign-owner-fix = ne parlez pas à un socket posé par un autre utilisateur : supprimez-le (en tant que cet utilisateur ou root) et démarrez votre démon
doctor-socket-dir-mode = le répertoire du socket {$path} a le mode {$mode} : d'autres utilisateurs peuvent atteindre le chemin du socket
doctor-socket-stale = aucun démon ne tourne mais son socket {$path} est toujours là (le démon ne s'est pas arrêté proprement)
doctor-socket-stale-fix = rien à faire : le prochain zeroclaw daemon le supprime ; ou rm {$path}
doctor-socket-ok = le socket {$path} vous appartient
doctor-client-closed-after-initialize = {$count} connexion(s) client fermée(s) juste après initialize sans autre appel (dernière à {$last}) ; un ancien zerocode (0.8.2-0.8.4) fait cela quand la server_version du démon ({$version}) n'est pas sa propre version
doctor-client-closed-after-initialize-fix = annoncez la version de votre zerocode (voir zerocode --version) : zeroclaw config set rpc.server_version 0.8.4 ; remettez-la à vide pour zerocode 0.8.6
doctor-gateway-stale = la passerelle sert {$url}, mais la configuration demande une autre adresse : {$error}
doctor-gateway-stale-fix = libérez cette adresse ou remettez gateway.host/gateway.port ; zeroclaw config set gateway.port PORT relie aussitôt
doctor-gateway-served = la passerelle sert {$url}
doctor-gateway-disabled = passerelle non servie : {$reason}
doctor-gateway-not-served = la passerelle est configurée sur {$addr} mais n'est pas servie : {$error}
doctor-gateway-fix-config = corrigez [gateway] dans config.toml, puis zeroclaw config reload
doctor-gateway-fix-in-use = un autre processus écoute sur {$addr} (trouvez-le : ss -ltnp 'sport = :{$port}') ; arrêtez-le, ou déplacez cette passerelle : zeroclaw config set gateway.port {$next} (le démon relie aussitôt)
doctor-gateway-fix-other = corrigez ce que l'erreur indique, puis zeroclaw config reload (ou choisissez une autre adresse : zeroclaw config set gateway.port {$next})
doctor-mcp-disabled = mcp.enabled = false : aucun des {$count} serveurs MCP n'est démarré
doctor-mcp-command-missing = serveur MCP {$server} : commande {$command} introuvable
doctor-mcp-command-missing-fix = installez-la, ou indiquez un chemin absolu dans {$property}
doctor-mcp-command-on-path = serveur MCP {$server} : {$command} est dans le PATH
doctor-mcp-ungranted = le serveur MCP {$server} n'est accordé à aucun agent (refus par défaut) : ses outils ne servent à personne
doctor-mcp-ungranted-fix = ajoutez [mcp_bundles.<nom>] servers = [{$server}] et listez le bundle dans agents.<alias>.mcp_bundles
doctor-mcp-ready = { $count ->
    [one] le serveur MCP {$server} est prêt avec {$count} outil
   *[other] le serveur MCP {$server} est prêt avec {$count} outils
}
doctor-mcp-backoff = le serveur MCP {$server} est arrêté (redémarré {$count} fois) : {$error}
doctor-mcp-backoff-fix = vérifiez la commande, ses arguments et son env dans {$property}, ou augmentez startup_timeout_secs pour un serveur lent
doctor-provider-unreachable = {$name} ({$url}) est injoignable : {$error}
doctor-provider-unreachable-fix = vérifiez le réseau et {$property} (zeroclaw config set {$property} URL)
doctor-provider-reachable = {$name} ({$url}) répond (HTTP {$status})
doctor-sop-runs-durable = les exécutions de SOP sont conservées dans {$path} ({$count} SOP chargées)
doctor-sop-runs-in-memory = les exécutions de SOP ne sont gardées qu'en mémoire et sont perdues au redémarrage : {$error}
doctor-sop-runs-in-memory-fix = corrigez ce que l'erreur indique (droits du répertoire d'état, runs.db abîmé : mettez-le de côté), puis redémarrez le démon ; ou réglez sop.persist_runs = false pour accepter des exécutions en mémoire seulement
doctor-sop-runs-memory = les exécutions de SOP ne sont gardées qu'en mémoire, comme configuré ({$count} SOP chargées)
doctor-sop-disabled = { $count ->
    [one] {$count} SOP n'a pas pu être chargée et est désactivée
   *[other] {$count} SOP n'ont pas pu être chargées et sont désactivées
}
doctor-sop-disabled-fix = zeroclaw sop validate <sops_dir> indique le fichier et la ligne de chaque problème

## La ligne de commande
cli-error-label = Erreur : {$error}
cli-try-label = Essayez : {$hint}
cli-usage-title = zeroclaw : un démon d'exécution d'agents d'IA personnels
cli-usage-line = Usage : zeroclaw <commande> [options]
cli-usage-flags = Lancez 'zeroclaw <commande> -h' pour les options d'une commande.
cli-unknown-command = commande inconnue {$command}
cli-did-you-mean-command = vouliez-vous dire {$command} ? (zeroclaw help liste les commandes)
cli-unknown-subcommand = {$group} : sous-commande inconnue {$command}
cli-did-you-mean-subcommand = vouliez-vous dire {$command} ?
cli-doctor-via-daemon = le démon en cours d'exécution
cli-doctor-via-process = ce processus (aucun démon ne tourne)
cli-doctor-header = zeroclaw doctor : {$root} (vérifié par {$via})
cli-doctor-fix = correction : {$fix}
cli-doctor-timed-out = délai dépassé pendant : {$phase}
cli-doctor-summary = {$ok} ok, {$warnings} avertissements, {$errors} erreurs
cli-doctor-found = doctor a trouvé {$errors} erreurs et {$warnings} avertissements
cli-doctor-found-hint = appliquez les corrections ci-dessus, puis relancez zeroclaw doctor
cli-daemon-about = lancer le démon au premier plan
cli-status-about = afficher l'état du démon en cours d'exécution
cli-agent-about = discuter avec un agent (une seule question avec -m, sinon interactif) ; démarre un démon éphémère si aucun ne tourne
cli-sessions-about = lister, afficher ou supprimer les sessions de discussion enregistrées
cli-memory-about = lister, chercher, afficher ou oublier ce dont les agents se souviennent
cli-skills-about = lister, afficher ou modifier les compétences des agents (les bundles et celles de chaque espace de travail)
cli-personality-about = lister, afficher ou modifier les fichiers d'identité d'un agent (SOUL.md, USER.md, ...)
cli-cron-about = lister, ajouter, retirer, lancer les tâches planifiées ou afficher leurs exécutions (via le démon en cours)
cli-sop-about = lancer des procédures opérationnelles standard, lister leurs exécutions, les approuver, refuser ou annuler (via le démon en cours)
cli-pair-about = afficher le code d'appairage de la passerelle, lister ou révoquer les appareils appairés (via le démon en cours)
cli-acp-about = parler l'Agent Client Protocol sur stdin/stdout pour un éditeur ; démarre un démon éphémère si aucun ne tourne
cli-mcp-about = servir la mémoire, les sessions, le cron et les SOP du démon comme outils MCP sur stdin/stdout (mcp serve) ; démarre un démon éphémère si aucun ne tourne
cli-quickstart-about = configurer un agent qui marche en cinq questions (fournisseur, modèle, nom, niveau de risque, options) ; modifie une configuration existante sur place après avoir montré le changement
cli-heartbeat-about = montrer l'état du heartbeat et le résultat de chaque créneau (par le démon en marche)
cli-onboard-about = obsolète : indique comment lancer zeroclaw quickstart, et n'écrit rien
cli-config-about = lire, définir, lister, supprimer ou valider les propriétés de configuration
cli-logs-about = afficher les événements d'exécution du démon (-f suit les nouveaux)
cli-costs-about = afficher les dépenses en modèles sous forme de tableau par jour, agent ou modèle
cli-doctor-about = vérifier l'installation (droits des fichiers, bases, secrets, configuration, fournisseurs) et dire comment corriger ce qui ne va pas
cli-backup-about = écrire une archive cohérente de l'installation (FICHIER.tar.gz), même pendant que le démon tourne
cli-restore-about = vérifier une archive, puis la restaurer comme installation (--force met l'ancienne de côté)
cli-storage-about = copier les sessions de discussion entre SQLite et PostgreSQL (migrate --to postgres|sqlite DSN, avec reprise et vérification), ou réécrire les bases SQLite sans leurs pages libres (compact, le démon arrêté)
cli-rpc-about = envoyer au démon des requêtes NDJSON lues sur stdin et afficher chaque réponse (remplace socat)
cli-stop-about = demander au démon en cours de s'arrêter
cli-service-about = installer, désinstaller, démarrer, arrêter ou afficher le démon comme service utilisateur (systemd, launchd)
cli-version-about = afficher la version

## La discussion (zeroclaw agent) : messages et demande d'approbation
chat-session-banner = session {$session} avec l'agent {$agent} ({$count} messages) ; /exit ou Ctrl-D pour quitter
chat-turn-cancelled = (tour annulé)
chat-cancelling = annulation du tour (interrompez encore pour quitter)
chat-history-trimmed = (les messages les plus anciens ont été retirés du contexte du modèle)
chat-approval-wants = {$tool} veut exécuter : {$summary}
chat-approval-prompt = Autoriser ? [o]ui / [n]on / [t]oujours :
# Les mots qui répondent à la question, séparés par des virgules (y, yes, a et always marchent toujours).
chat-approval-yes = o,oui
chat-approval-always = t,toujours
chat-approval-eof = (pas de réponse sur stdin : refusé)
chat-elicit-several = (plusieurs : des numéros séparés par des virgules)
chat-elicit-prompt = Réponse :
chat-elicit-eof = (pas de réponse sur stdin : décliné)
cli-completion-about = afficher le script de complétion du shell (bash, zsh ou fish) : source <(zeroclaw completion bash)
cli-ps-about = lister les tours en cours dans le démon : session, agent, modèle et durée écoulée
cli-ps-none = aucun tour en cours
cli-models-about = lister les modèles qu'offre un fournisseur configuré (/models compatible OpenAI, /api/tags d'Ollama)
cli-ps-model-override = {$model} (cette session)

## zeroclaw quickstart et onboard : questions, progression et erreurs
cli-quickstart-synopsis = [options]

    Configure un agent qui fonctionne en cinq questions : le fournisseur de modèles (openai pour OpenAI ou tout
    serveur compatible OpenAI désigné par --uri, ollama, anthropic, ou echo hors ligne), son modèle, le nom de
    l'agent, le préréglage de risque (strict, balanced ou open), et s'il faut appairer un appareil et installer
    le service. Chaque réponse a son option ; les questions sans option sont posées sur le terminal, ou lues
    ligne par ligne depuis un tube. Le fournisseur est testé par une vraie requête avant toute écriture. Un
    config.toml existant est modifié sur place (commentaires et reste conservés, l'ancien fichier gardé sous
    config.toml.bak), et le changement est montré et confirmé d'abord ; --dry-run se contente de le montrer.
cli-quickstart-ask-provider = Fournisseur de modèles (openai, ollama, anthropic, echo)
cli-quickstart-ask-uri = URL de base de l'API (un serveur local compatible OpenAI convient aussi)
cli-quickstart-ask-model = Modèle
cli-quickstart-ask-key-env = Variable d'environnement qui contient la clé d'API
cli-quickstart-ask-agent = Nom de l'agent
cli-quickstart-ask-preset = Préréglage de risque : strict (demande avant chaque appel risqué), balanced (utilise les outils de son espace de travail, demande pour le reste), open (aucune question)
cli-quickstart-ask-pair = Appairer un appareil (téléphone, navigateur) avec la passerelle après la configuration ?
cli-quickstart-ask-service = Installer le démon comme service utilisateur ?
cli-quickstart-ask-confirm = Écrire ces changements dans {$path} ?
# Comment une question oui/non montre sa valeur par défaut, et les mots qui répondent oui (y et yes sont toujours compris).
cli-quickstart-default-no = o/N
cli-quickstart-default-yes = O/n
cli-quickstart-yes-words = o,oui
cli-quickstart-testing = Test de {$provider} par une requête...
cli-quickstart-test-ok = Le fournisseur a répondu : {$answer}
cli-quickstart-answer-too-large = la réponse du fournisseur dépasse ce que le test du quickstart accepte (1 Mio)
cli-quickstart-no-change = Rien à changer.
cli-quickstart-diff-after = {$path} (après le quickstart)
cli-quickstart-dry-run = (essai à blanc : rien n'a été écrit)
cli-quickstart-cancelled = Quickstart annulé. Aucune configuration écrite.
cli-quickstart-written = Quickstart terminé : l'agent {$agent} utilise {$provider} avec le profil de risque {$risk} ({$path} ; l'ancien fichier est {$backup}).
cli-quickstart-next-steps = Ensuite : {$command}
cli-quickstart-pair-later = Pour appairer un appareil, démarrez le démon (zeroclaw daemon) puis lancez : zeroclaw pair code
cli-quickstart-via-daemon = (un démon tourne : le changement a été appliqué par lui)
cli-quickstart-provider-failed = le test du fournisseur a échoué : {$error} ; rien n'a été modifié sur le disque
cli-quickstart-provider-failed-hint = vérifiez --uri, --model et la clé d'API, ou relancez avec --no-test
cli-quickstart-no-key = {$variable} n'est pas définie : exportez-y votre clé d'API, ou nommez une autre variable avec --api-key-env
cli-quickstart-unexpected-argument = quickstart : argument inattendu {$argument}
cli-quickstart-unknown-provider = quickstart : fournisseur inconnu {$provider}
cli-quickstart-unknown-provider-hint = --provider openai, ollama, anthropic ou echo
cli-quickstart-bad-agent-name = quickstart : le nom d'agent {$name} n'est pas permis : utilisez des minuscules, des chiffres et des tirets bas simples, en commençant et finissant par une lettre ou un chiffre
cli-quickstart-bad-agent-name-again = {$message} (par ex. {$example})
cli-quickstart-unknown-preset = quickstart : préréglage inconnu {$preset}
cli-quickstart-unknown-preset-hint = --preset strict, balanced ou open
cli-quickstart-daemon-silent = quickstart : un démon (pid {$pid}) détient {$root} mais n'a pas répondu à son point d'accès
cli-quickstart-daemon-silent-hint = zeroclaw status, puis réessayez
cli-quickstart-apply-failed = quickstart : {$error} ; rien n'a été modifié sur le disque
cli-quickstart-cannot-apply = quickstart : les réponses ne peuvent pas être appliquées ; rien n'a été modifié sur le disque
cli-onboard-deprecated = zeroclaw onboard est obsolète et ne fait rien : lancez zeroclaw quickstart (il modifie une configuration existante sur place, après avoir montré le changement).
cli-onboard-unsupported = onboard : {$argument} n'est plus pris en charge : la mise en route, c'est zeroclaw quickstart

## Erreurs et conseils des autres commandes
cli-acp-not-served = le démon qui sert {$endpoint} ne sert pas ACP sur {$target}
cli-acp-not-served-hint = cherchez la raison dans le journal du démon, puis zeroclaw stop et réessayez
cli-agent-blank-message = agent : -m attend un message non vide
cli-backup-no-install = aucune installation dans {$path}
cli-restore-daemon-running-hint = zeroclaw stop, puis relancez la restauration
cli-restore-not-empty-hint = {$command} (l'installation actuelle est gardée sous {$path})
cli-restore-invalid-hint = rien n'a été écrit ; utilisez une autre copie de la sauvegarde
cli-unknown-log-level = niveau de journal inconnu {$level}
cli-unknown-log-format = format de journal inconnu {$format}
cli-completion-unknown-shell = pas de complétion pour le shell {$shell}
cli-config-not-prop-value = config : set-many : l'argument {$index} ({$argument}) n'est pas PROP=VALEUR
cli-config-reload-no-daemon = config : reload : {$error} sur {$endpoint} (le fichier est lu au démarrage du démon)
cli-config-validate-missing = config : validate : {$path} n'existe pas
cli-config-validate-missing-hint = vérifiez le chemin donné à --file
cli-config-invalid = config : {$path} n'est pas valide
cli-config-fix-line-hint = corrigez la ligne ci-dessus, puis : zeroclaw config validate
cli-config-problems = { $count ->
    [one] config : {$path} n'est pas valide : {$count} problème
   *[other] config : {$path} n'est pas valide : {$count} problèmes
}
cli-config-fix-lines-hint = corrigez les lignes ci-dessus, puis : zeroclaw config validate
cli-forbidden-hint = demandez le droit à un administrateur, ou lancez la commande sous l'utilisateur du démon
cli-config-fix-at-hint = corrigez {$file}:{$line} ({$key}), puis : zeroclaw config validate
cli-config-refused-write-hint = rien n'a été écrit dans {$file} ; définissez d'abord ce que {$property} nomme (ou posez les deux d'un seul zeroclaw config set-many)
cli-config-daemon-silent = config : un démon (pid {$pid}) détient {$root} mais n'a pas répondu à son point d'accès
cli-config-migrate-problems = { $count ->
    [one] config : {$path} a {$count} problème ; un démon désactive cette entrée
   *[other] config : {$path} a {$count} problèmes ; un démon désactive ces entrées
}
cli-costs-bad-by = --by {$value} : attendu day, agent ou model
cli-cron-one-schedule = cron add : donnez exactement une option parmi --cron, --at et --every
cli-cron-one-action = cron add : donnez exactement une option parmi --command et --prompt
cli-cron-at-not-positive = cron add : --at {$value} : le délai doit être positif
cli-cron-at-invalid = cron add : --at {$value} : attendu une heure RFC 3339 ou un délai
cli-cron-at-invalid-hint = --at 20m, ou --at 2026-07-01T09:00:00+02:00
cli-cron-choose-agent = { $count ->
    [one] {$op} : {$count} agent est activé ({$agents}) : choisissez-en un
   *[other] {$op} : {$count} agents sont activés ({$agents}) : choisissez-en un
}
cli-cron-job-failed = la tâche {$id} a échoué ({$status})
cli-daemon-unsafe-lock-hint = supprimez ce fichier si personne ne s'en sert, ou mettez la socket (ZEROCLAW_SOCKET) dans un répertoire où vous seul pouvez écrire
cli-no-daemon = aucun démon ne tourne
cli-no-daemon-at = {$error} sur {$endpoint}
cli-editor-hint = mettez dans EDITOR la commande de votre éditeur, par ex. EDITOR=nano
cli-logs-unknown-severity = gravité inconnue {$severity}
cli-logs-bad-since = --since {$value} n'est ni une durée ni une heure RFC 3339
cli-logs-bad-limit = --limit doit valoir au moins 1
cli-logs-follow-no-daemon = logs : -f suit un démon en cours : {$error}
cli-logs-follow-no-daemon-hint = zeroclaw logs (sans -f) lit les événements enregistrés ; zeroclaw daemon en démarre un
cli-daemon-closed = le démon a fermé la connexion
cli-mcp-not-paired = mcp serve : {$variable} n'est pas un jeton appairé : {$error}
cli-mcp-not-paired-hint = zeroclaw pair code --profile NOM crée un code ; appairez un appareil avec (POST /pair) et posez son jeton, ou retirez {$variable}
cli-mcp-session-ended = mcp serve : la session s'est terminée (les trames sont limitées à {$limit} octets) : {$error}
cli-models-failed = pas de liste de modèles de {$providers}
cli-logs-not-persisted = logs : la conservation des journaux est désactivée (observability.log_persistence = "none") : rien n'a été gardé
cli-costs-bad-time = costs : {$flag} {$value} n'est pas une heure RFC 3339
cli-pair-unknown-profile-hint = choisissez un profil défini, ou définissez-en un d'abord : [permission_profiles.NOM] grants = ["sessions:execute"] dans config.toml, puis zeroclaw config reload
cli-personality-missing = personality : l'agent {$agent} n'a pas encore de {$file}
cli-rpc-unanswered = { $count ->
    [one] {$count} requête toujours sans réponse après {$wait}
   *[other] {$count} requêtes toujours sans réponse après {$wait}
}
cli-service-unsupported-hint = lancez `zeroclaw daemon` depuis votre propre script de démarrage
cli-sessions-none = sessions : aucune session {$session}
cli-sessions-none-hint = zeroclaw sessions list (un identifiant ou un préfixe unique d'un identifiant)
cli-sessions-ambiguous = sessions : {$prefix} est le préfixe de {$count} sessions : {$sessions}
cli-sessions-ambiguous-more = sessions : {$prefix} est le préfixe de {$count} sessions : {$sessions} et {$more} autres
cli-sessions-ambiguous-hint = donnez une plus grande part de l'identifiant
cli-skills-none = skills : aucune compétence {$skill}
cli-skills-ambiguous = skills : {$count} compétences se nomment {$skill}
cli-skills-ambiguous-hint = choisissez-en une : {$choices}
cli-skills-edit-hint = {$command} (la modification n'a pas été enregistrée)
cli-unexpected-argument = {$command} : argument inattendu {$argument}
cli-sop-validate-one-dir = sop validate : un répertoire au plus, reçu {$count}
cli-sop-validate-missing = sop validate : {$path} n'existe pas
cli-sop-validate-dir-hint = zeroclaw sop validate RÉP (un dossier de SOP avec SOP.toml, ou un dossier de tels dossiers)
cli-sop-validate-empty = sop validate : aucune SOP dans {$path} (pas de <nom>/SOP.toml)
cli-sop-validate-errors = sop validate : {$errors} erreur(s), {$warnings} avertissement(s) dans {$count} SOP
cli-sop-validate-errors-hint = corrigez les lignes ci-dessus ; une SOP en erreur n'est pas chargée (les autres le sont)
cli-sop-bad-payload = sop run : --payload n'est pas du JSON valide
cli-spawn-failed = impossible de démarrer un démon éphémère : {$error}
cli-spawn-failed-exe = impossible de démarrer un démon éphémère ({$program}) : {$error}
cli-spawn-hint = zeroclaw daemon (dans un autre terminal), puis réessayez
cli-spawn-log-hint = regardez {$path}, ou lancez zeroclaw daemon dans un autre terminal
cli-spawn-wait-cancelled = en attendant le démon éphémère : {$error}
cli-spawn-exited = le démon éphémère s'est arrêté avant de servir {$target} : {$error}
cli-spawn-timeout = le démon éphémère n'a pas servi {$target} en {$wait}
cli-spawn-lock-held = un démon (pid {$pid}) détient {$lock} mais ne sert pas {$target}
cli-spawn-lock-held-hint = zeroclaw stop, ou attendez qu'il finisse de démarrer
cli-stop-timeout = le démon (pid {$pid}) ne s'est pas arrêté en {$wait}
cli-internal-error-hint = zeroclaw logs --severity error (le démon a journalisé la cause)
cli-config-default-invalid = config : la configuration par défaut intégrée n'est pas valide : {$error}
cli-config-set-unconfirmed = config/set : le démon n'a pas confirmé le changement de {$property}
cli-config-set-many-unconfirmed = config/set-many : le démon n'a pas confirmé le changement
cli-service-no-exe = service : le chemin de ce programme : {$error}
cli-cron-job-hint = zeroclaw cron list (une tâche se désigne par son id ou son nom)
cli-cron-add-hint = zeroclaw cron add --cron "0 9 * * 1-5" --command "make test" (ou --every 1h, --at 20m)
cli-memory-key-hint = zeroclaw memory list (ou memory search TEXTE) montre les clés
cli-personality-file-hint = zeroclaw personality list (les fichiers modifiables), --agent NOM
cli-sop-run-hint = zeroclaw sop runs (une exécution se désigne par son id), ou zeroclaw sop list
cli-sop-gate-hint = approval_mode ou la politique d'approbation de l'étape ne vous permet pas de franchir cette porte ([sop] approval_mode, [sop.approval.policies])
cli-sop-internal-hint = définissez [sop] sops_dir dans config.toml et redémarrez le démon (zeroclaw logs --severity error en dit plus)
cli-sop-manual-hint = zeroclaw sop list (la SOP doit avoir un [[triggers]] type = "manual")
cli-sop-pending-hint = zeroclaw sop pending (les exécutions en attente d'une décision)

## Le chat (zeroclaw agent) : erreurs et reconnexion
chat-no-agent-enabled = agent : aucun agent n'est activé
chat-agents-enabled = agent : {$count} agents sont activés : {$agents}
chat-agents-enabled-hint = choisissez-en un avec -a, par exemple {$command}
chat-daemon-unreachable = agent : le démon est parti et ne peut plus être joint
chat-resume-failed = agent : reconnecté, mais la session {$session} n'a pas pu reprendre
chat-reconnecting = le démon est parti ; reconnexion...
chat-reconnected = { $count ->
    [one] reconnecté : session {$session} reprise ({$count} message)
   *[other] reconnecté : session {$session} reprise ({$count} messages)
}
chat-interrupt-again = (Ctrl-C encore ou Ctrl-D pour quitter)

## zeroclaw quickstart : les problèmes du planificateur avec une soumission (quickstart/* les donnent en anglais)
cli-qs-agent-name-required = le nom de l'agent est requis
cli-qs-agent-name-invalid = le nom d'agent {$name} n'est pas permis : utilisez des minuscules, des chiffres et des tirets bas isolés, en commençant et finissant par une lettre ou un chiffre, {$max} caractères au plus (par exemple my_agent)
cli-qs-agent-exists = l'agent `{$name}` existe déjà
cli-qs-bad-mode = le mode doit être "existing" ou "fresh", reçu {$mode}
cli-qs-no-profile = aucun profil `{$ref}` configuré
cli-qs-unknown-runtime = préréglage d'exécution inconnu `{$name}`
cli-qs-bad-reference = `{$ref}` n'est pas une référence `<type>.<alias>`
cli-qs-no-provider = aucun `providers.models.{$family}.{$alias}` configuré
cli-qs-provider-required = le type de fournisseur, l'alias et le modèle sont requis
cli-qs-unknown-provider-type = type de fournisseur de modèles inconnu `{$type}` — choisissez-en un dans la liste des fournisseurs
cli-qs-alias-invalid = l'alias {$alias} n'est pas permis : utilisez des minuscules, des chiffres et des tirets bas isolés (par exemple {$example})
cli-qs-alias-exists = l'alias `{$ref}` existe déjà
cli-qs-provider-field = le champ de fournisseur de modèles `{$field}` n'est pas disponible dans Quickstart
cli-qs-auth-mode = le mode d'authentification `{$mode}` n'est pas disponible : utilisez api_key
cli-qs-model-control = le nom du modèle ne doit pas contenir de caractères de contrôle
cli-qs-unknown-risk = préréglage de risque inconnu `{$name}`
cli-qs-no-storage = aucun `storage.{$ref}` configuré
cli-qs-memory-backend = memory.backend vaut {$backend} : la mémoire postgres d'un agent utilise cette connexion ; posez d'abord memory.backend = {$ref}
cli-qs-postgres-needs-connection = la mémoire postgres a besoin d'une connexion : ajoutez [storage.postgres.<alias>] db_url, puis choisissez-la comme stockage existant
cli-qs-memory-unsupported = le type de mémoire `{$kind}` n'est pas pris en charge par ce démon (sqlite, markdown, postgres ou none)
cli-qs-unknown-memory = type de mémoire inconnu `{$kind}`
cli-qs-no-channel = aucun canal `{$ref}` configuré
cli-qs-channel-bound = le canal `{$ref}` est déjà lié à l'agent `{$agent}`
cli-qs-channel-required = le type de canal et l'alias sont requis
cli-qs-channel-type = le type de canal `{$type}` n'est pas disponible dans Quickstart
cli-qs-channel-field = le champ de canal `{$field}` n'est pas disponible dans Quickstart
cli-qs-telegram-token = un jeton de bot Telegram (de @BotFather) ressemble à 123456789:AA… (des chiffres, deux-points, puis des lettres, des chiffres, - et _)
cli-qs-peer-name-required = le nom du groupe de pairs est requis
cli-qs-peer-channel-required = le canal du groupe de pairs est requis
cli-qs-peer-name-invalid = le nom de groupe de pairs {$name} n'est pas permis : utilisez des minuscules, des chiffres et des tirets bas isolés (par exemple telegram_main_default)
cli-qs-peer-unknown-channel = le groupe de pairs `{$group}` désigne un canal inconnu `{$channel}`
cli-qs-peer-exists = le groupe de pairs `{$group}` existe déjà
cli-qs-not-identity-file = `{$file}` n'est pas un fichier d'identité ({$files})
cli-qs-content-too-long = le contenu dépasse la limite de {$limit} caractères
cli-qs-files-not-here = les fichiers d'identité ne peuvent pas être écrits d'ici
cli-qs-persist-failed = échec de l'enregistrement de la configuration : {$error}
cli-qs-file-write-failed = la configuration a été enregistrée, mais le fichier d'identité n'a pas pu être écrit : {$error}
cli-qs-existing-not-string = la valeur d'un choix existant est l'alias, une chaîne
cli-qs-fresh-no-value = un nouveau choix a besoin d'une valeur
cli-qs-fresh-bad-shape = la nouvelle valeur n'a pas la forme attendue

## Messages des autres commandes (ce qu'elles ont fait, une liste vide)
cli-backup-done = { $count ->
    [one] {$count} fichier ({$size}) de {$root} sauvegardé dans {$archive}
   *[other] {$count} fichiers ({$size}) de {$root} sauvegardés dans {$archive}
}
cli-backup-not-included = non inclus : {$path}
cli-backup-secret-key = l'archive contient .secret_key, qui déchiffre tous les secrets de config.toml : gardez {$archive} aussi privée que l'installation
cli-restore-moved-aside = l'installation précédente est gardée dans {$path}
cli-restore-next = ensuite : zeroclaw daemon, puis zeroclaw doctor
cli-config-no-properties = aucune propriété sous {$prefix}
cli-config-nothing-to-delete = {$property} n'est pas posé dans le fichier (rien à supprimer)
cli-config-validate-not-yet = {$path} n'existe pas encore : le premier démarrage du démon écrit la configuration par défaut, qui est valide
cli-migrate-missing = {$path} n'existe pas : rien à migrer (le premier démarrage écrit une configuration au schéma v3)
cli-migrate-already-v3 = {$path} est déjà au schéma v3 : rien à migrer
cli-migrate-done = {$path} migré du schéma v{$from} au v3 ; le fichier précédent est gardé sous {$backup}
cli-migrate-not-reloaded = le démon en marche ne l'a pas relu ({$error}) ; il garde les mêmes valeurs, migrées en mémoire, jusqu'à ce qu'il le fasse
cli-migrate-reloaded = le démon en marche l'a relu (génération {$generation})
cli-cron-no-jobs = aucune tâche planifiée
cli-no-runs = aucune exécution
cli-memory-none = aucun souvenir
cli-pair-code-owner = l'appareil appairé avec lui est l'égal du propriétaire, sauf si gateway.device_permission_profiles restreint les appareils
cli-pair-code-profile = l'appareil appairé avec lui n'a que le profil de permissions {$profile}
cli-pair-code-note = code à usage unique ({$who}) : envoyez-le en X-Pairing-Code à POST /pair sur la passerelle (ou {"{"}"code"{"}"} à POST /api/pair)
cli-pair-none = aucun appareil appairé
cli-pair-revoked = {$device} révoqué : son jeton porteur ne fonctionne plus
cli-sessions-empty = aucune session
cli-sessions-older = { $count ->
    [one] ({$count} message plus ancien non affiché ; --limit {$total} pour tout voir)
   *[other] ({$count} messages plus anciens non affichés ; --limit {$total} pour tout voir)
}
cli-skills-empty = aucune compétence
cli-edit-unchanged = aucun changement : rien n'a été écrit
cli-skills-wrote = compétence {$skill} du paquet {$bundle} écrite
cli-personality-wrote = { $bytes ->
    [one] {$file} de l'agent {$agent} écrit ({$bytes} octet)
   *[other] {$file} de l'agent {$agent} écrit ({$bytes} octets)
}
cli-sop-no-runs = aucune exécution de SOP
cli-sop-none-pending = Aucune exécution de SOP n'attend d'approbation.
cli-sop-none-in = aucune SOP dans {$path}
cli-sop-none-in-hint = mkdir -p {$path}/hello et écrivez hello/SOP.toml ([sop] name, description ; [[triggers]] type = "manual") et hello/SOP.md (## Steps)
cli-logs-missed = (événements {$from} à {$to} manqués : ce client a pris du retard)
cli-logs-follow-only = (la persistance des journaux est coupée : seuls les nouveaux événements sont montrés)
chat-repl-banner = { $count ->
    [one] session {$session} avec l'agent {$agent} ({$count} message) ; /help pour les commandes, Ctrl-D pour partir
   *[other] session {$session} avec l'agent {$agent} ({$count} messages) ; /help pour les commandes, Ctrl-D pour partir
}
chat-repl-turn-cancelled = (tour annulé ; Ctrl-C encore ou Ctrl-D pour quitter)
chat-connection-lost = la connexion au démon a été perdue pendant le tour : {$error}
chat-answer-lost = (la réponse à ce message a été perdue ; renvoyez-le)
chat-repl-bye = session {$session} avec l'agent {$agent} ; reprenez-la plus tard avec : {$command}
chat-repl-new-session = nouvelle session {$session} avec l'agent {$agent} (la précédente reprend avec : {$command})
chat-repl-model = modèle {$model} pour cette session dès le prochain tour (fournisseur {$provider})
cli-costs-unpriced = sans prix (enregistrés à 0 $, non comptés par les budgets) : {$models}
cli-costs-price-one = donnez-lui un prix avec : {$command}  (USD par million de jetons)
cli-personality-list-note = agent {$agent} ; le prompt système lit au plus {$max} caractères de chaque fichier
cli-personality-truncated = (plus long que ce que lit le prompt système : il voit le fichier coupé)
cli-sop-config-warning = avertissement : {$path} : {$error} (le dossier des SOP par défaut est utilisé)
cli-sop-progress = {$status} : étape {$step} sur {$total}
cli-sop-waiting = en attente d'une décision : zeroclaw sop approve {$run} (ou deny)
cli-offline-note = (aucun démon ne tourne : lu dans les fichiers de l'installation)

## storage migrate
cli-storage-usage = storage migrate : --to postgres|sqlite et un DSN (ou - pour le lire sur l'entrée standard) sont requis
cli-storage-stdin = storage migrate : impossible de lire le DSN sur l'entrée standard : {$err}
cli-storage-daemon-running = storage migrate : un démon tourne sur {$path} : {$err}
cli-storage-daemon-running-hint = zeroclaw stop, puis relancez la migration
cli-storage-no-chat-db = storage migrate : aucune base de conversations à {$path}
cli-storage-dsn-hint = vérifiez le DSN (postgres://utilisateur:motdepasse@hôte:port/base) et que le serveur répond
cli-storage-conflict-hint = rien n'a été écrasé ; migrez vers une destination vide, ou supprimez d'abord cette session là-bas
cli-storage-failed = storage migrate : {$err} (les sessions déjà copiées sont gardées ; relancez pour reprendre)
cli-storage-done = sessions de conversation : {$sessions} ({$messages} messages) dans {$where} : {$copied} copiées maintenant, {$skipped} déjà présentes ; nombres et empreintes SHA-256 vérifiés
cli-storage-kept = les fichiers SQLite sont gardés : {$path}
cli-storage-not-copied = non copiés par cette commande : la mémoire (son stockage PostgreSQL se règle dans [memory]), cron, les exécutions SOP et les autres stockages

## storage compact
cli-compact-no-data = storage compact : {$path} n'a pas de répertoire de données : rien à compacter
cli-compact-daemon-running = storage compact : un démon (pid {$pid}) occupe {$path}
cli-compact-daemon-running-hint = zeroclaw stop, puis zeroclaw storage compact
cli-compact-missing = {$store} : {$path} n'existe pas : rien à compacter
cli-compact-failed-hint = la base est inchangée ; zeroclaw doctor la vérifie
cli-compact-none = aucune base SQLite à compacter
## usage and flag help (cli-flag-SET-FLAG, or cli-flags-FLAG shared by every command; see newFlagSet)
cli-usage = Usage : {$command}
cli-flag-agent-a = forme courte de --agent
cli-flags-agent = l'agent (par défaut : le seul agent activé)
cli-flag-agent-agent = alias de l'agent (par défaut : le seul agent configuré) ; -a en bref
cli-flag-costs-agent = seulement les requêtes de cet agent
cli-flag-cron-add-agent = agent sous lequel la tâche tourne (par défaut : le seul agent activé)
cli-flag-memory-forget-agent = oublier seulement dans la mémoire de cet agent (sinon la clé de chaque agent)
cli-flag-memory-get-agent = la mémoire de cet agent (sinon celle de n'importe quel agent)
cli-flag-memory-list-agent = seulement les souvenirs de cet agent (et ceux qu'il peut lire)
cli-flag-memory-search-agent = chercher dans les souvenirs de cet agent (et ceux qu'il peut lire)
cli-flag-quickstart-agent = nom du nouvel agent
cli-flag-skills-edit-agent = l'agent d'une compétence d'espace de travail
cli-flag-skills-list-agent = seulement les compétences de l'espace de travail de cet agent (les paquets sont listés aussi)
cli-flag-skills-show-agent = l'agent d'une compétence d'espace de travail
cli-flag-quickstart-api-key = la clé d'API elle-même (l'option d'upstream ; elle se voit dans ps : préférez --api-key-env)
cli-flag-quickstart-api-key-env = variable d'environnement qui contient la clé d'API (par défaut : OPENAI_API_KEY ou ANTHROPIC_API_KEY)
cli-flag-cron-add-at = une seule exécution : une heure RFC 3339, ou un délai à partir de maintenant comme 20m ou 2h
cli-flag-skills-edit-bundle = le paquet de la compétence ; pour une compétence qui n'y est pas encore, où la créer
cli-flag-skills-list-bundle = seulement ce paquet (« workspace » : les compétences propres des agents)
cli-flag-skills-show-bundle = le paquet de la compétence (par défaut : la seule compétence de ce nom)
cli-flag-costs-by = regrouper le tableau par jour (day), agent ou modèle (model)
cli-flag-logs-category = seulement les événements de cette catégorie (agent, tool, provider, session, system, ...)
cli-flag-memory-list-category = seulement cette catégorie (core, daily, conversation ou un nom à vous)
cli-flag-cron-add-command = commande shell, lancée dans l'espace de travail de l'agent sous son profil de risque
cli-flags-config-dir = racine de l'installation (par défaut : $ZEROCLAW_CONFIG_DIR, sinon ~/.zeroclaw)
cli-flag-cron-add-cron = expression cron, par ex. "0 9 * * 1-5" (minute heure jour mois jour-de-la-semaine)
cli-flag-config-migrate-dry-run = afficher le fichier migré au lieu de l'écrire
cli-flag-quickstart-dry-run = montrer la modification de config.toml sans rien écrire
cli-flag-daemon-ephemeral = s'arrêter 1 s après la déconnexion du dernier client
cli-flag-cron-add-every = lancer toutes les DURATION, par ex. 30m
cli-flag-logs-f = continuer d'afficher les nouveaux événements à mesure qu'ils arrivent
cli-flag-config-validate-file = fichier à valider (par défaut : le config.toml de l'installation)
cli-flag-restore-force = restaurer par-dessus une installation non vide, gardée sous DIR.before-restore-<heure>
cli-flag-costs-from = seulement les requêtes à partir de cette heure RFC 3339
cli-flag-quickstart-install-service = installer ensuite le démon comme service utilisateur
cli-flags-json = afficher les exécutions en JSON
cli-flag-costs-json = afficher le résultat brut de cost/query en JSON
cli-flag-cron-list-json = afficher les tâches en JSON
cli-flag-doctor-json = afficher le résultat de doctor/run en JSON
cli-flag-heartbeat-runs-json = afficher l'état et les exécutions en JSON
cli-flag-logs-json = afficher chaque événement comme sa ligne JSON
cli-flag-memory-get-json = afficher l'entrée en JSON
cli-flag-memory-list-json = afficher les entrées en JSON
cli-flag-memory-search-json = afficher les entrées en JSON
cli-flag-models-json = afficher les résultats de config/catalog-models en JSON
cli-flag-pair-list-json = afficher les appareils en JSON
cli-flag-personality-list-json = afficher les fichiers en JSON
cli-flag-ps-json = afficher les tours en cours en JSON
cli-flag-sessions-list-json = afficher les sessions en JSON (chacune avec son titre)
cli-flag-sessions-show-json = afficher les messages en JSON, tels qu'enregistrés
cli-flag-skills-list-json = afficher les compétences en JSON
cli-flag-skills-show-json = afficher la compétence en JSON
cli-flag-sop-show-json = afficher l'exécution en JSON
cli-flag-status-json = afficher le résultat brut de status en JSON
cli-flags-limit = au plus ce nombre d'exécutions, les plus récentes d'abord
cli-flag-logs-limit = combien d'événements passés afficher (les plus récents)
cli-flag-memory-search-limit = au plus ce nombre de résultats
cli-flag-sessions-list-limit = au plus ce nombre de sessions (par défaut : toutes)
cli-flag-sessions-show-limit = n'afficher que les N derniers messages (par défaut : la taille de page du démon)
cli-flag-daemon-log-format = format du journal sur stderr : text ou json
cli-flag-daemon-log-level = niveau du journal : debug, info, warn ou error
cli-flag-agent-m = envoyer ce seul message, afficher la réponse et sortir ; --message en entier
cli-flag-quickstart-memory = la mémoire de l'agent : sqlite, markdown ou none
cli-flag-agent-message = la même chose que -m
cli-flag-quickstart-model = nom du modèle
cli-flag-quickstart-model-provider = la même chose que --provider (le nom d'upstream)
cli-flag-logs-n = forme courte de --limit
cli-flag-cron-add-name = un nom pour la tâche
cli-flag-quickstart-no-test = sauter la requête de test du fournisseur
cli-flag-doctor-offline = sauter les sondes de joignabilité des fournisseurs (pas de réseau)
cli-flag-quickstart-pair = afficher ensuite un code d'appairage pour un appareil (il faut un démon en marche)
cli-flag-sop-run-payload = l'entrée de l'étape 1, en texte JSON (la charge du déclencheur)
cli-flag-quickstart-preset = préréglage de risque : strict, balanced ou open
cli-flag-pair-code-profile = profil de permissions que reçoit l'appareil appairé avec ce code (par défaut : gateway.device_permission_profiles ; none : l'égal du propriétaire)
cli-flag-cron-add-prompt = prompt d'une tâche d'agent : chaque exécution est un tour dans une session neuve
cli-flag-quickstart-provider = fournisseur de modèles : openai (ou compatible OpenAI avec --uri), ollama, anthropic ou echo
cli-flag-quickstart-provider-alias = alias de la nouvelle entrée de fournisseur (par défaut : le premier libre parmi default, quickstart, quickstart_2...)
cli-flag-sessions-list-query = seulement les sessions dont les messages correspondent à cette requête plein texte
cli-flag-rpc-raw = ne pas envoyer initialize d'abord
cli-flag-sop-cancel-reason = pourquoi (affiché comme raison d'échec de l'exécution)
cli-flag-sop-deny-reason = pourquoi (inscrit au registre de l'exécution et affiché comme sa raison d'échec)
cli-flag-storage-migrate-schema = le schéma PostgreSQL des tables (par défaut : le search_path de la connexion)
cli-flag-agent-session = reprendre la session de cet identifiant (créée si elle n'existe pas)
cli-flag-memory-list-session = seulement les souvenirs de cette clé de session
cli-flag-logs-severity = sévérité la plus basse affichée : trace, debug, info, warn ou error
cli-flag-logs-since = seulement les événements postérieurs : une durée en arrière depuis maintenant (10m, 2h) ou une heure RFC 3339
cli-flag-sop-runs-sop = seulement les exécutions de cette SOP
cli-flags-step = seulement si l'exécution attend à cette étape (ce que zeroclaw sop pending a montré) ; 0 : à n'importe quelle porte
cli-flag-quickstart-test-timeout = secondes que peut prendre la requête de test du fournisseur
cli-flag-stop-timeout = combien de temps attendre que le démon s'arrête
cli-flag-costs-to = seulement les requêtes avant cette heure RFC 3339
cli-flag-storage-migrate-to = la destination : postgres (copier SQLite dans PostgreSQL) ou sqlite (recopier PostgreSQL)
cli-flag-cron-add-tz = fuseau horaire IANA de --cron, par ex. Europe/Paris (par défaut : celui de l'hôte du démon)
cli-flags-unit-dir = écrire l'unité ici plutôt que dans le dossier du gestionnaire de services, sans toucher au gestionnaire (par défaut : $ZEROCLAW_SERVICE_DIR)
cli-flag-quickstart-uri = URL de base de l'API du fournisseur (par défaut : celle du fournisseur)
cli-flag-config-migrate-v = lister aussi ce qui a bougé et où
cli-flag-rpc-wait = une fois l'entrée standard finie, combien de temps attendre les réponses en suspens
cli-flag-sop-run-wait = attendre la fin de l'exécution en affichant chaque changement (une porte attend un approbateur)
cli-flag-quickstart-yes = prendre la valeur par défaut de chaque question sans option, et écrire sans demander

## version, status, heartbeat runs, sop show
cli-version-line = zeroclaw {$build} (protocole {$protocol} de zeroclaw {$server}, {$go} {$os}/{$arch})
cli-status-running = démon zeroclaw {$build} (protocole {$protocol} de zeroclaw {$server}) en marche
cli-status-pid = pid :
cli-status-uptime = en marche depuis :
cli-status-endpoint = point d'accès :
cli-status-config-dir = dossier de config :
cli-status-config-file = fichier de config :
cli-status-data-dir = dossier des données :
cli-status-sessions = sessions :
cli-status-gateway = passerelle :
cli-status-heartbeat = battement :
cli-status-sop = sop :
cli-status-sessions-active = { $count ->
    [one] {$count} active
   *[other] {$count} actives
}
cli-status-sop-counts = {$loaded} chargées, {$disabled} désactivées, {$active} exécutions actives ({$waiting} en attente d'approbation)
cli-status-sop-line = {$counts} ; {$storage}
cli-status-sop-durable = exécutions gardées dans {$path}
cli-status-sop-volatile-warning = EXÉCUTIONS EN MÉMOIRE SEULEMENT, PERDUES AU REDÉMARRAGE : {$warning} (zeroclaw doctor dit comment corriger)
cli-status-sop-volatile = exécutions en mémoire seulement (comme configuré)
cli-status-gateway-served = servie à {$url}
cli-status-gateway-served-stuck = servie à {$url} (un rechargement n'a pas pu la déplacer : {$error})
cli-status-gateway-disabled = désactivée ({$reason})
cli-status-gateway-not-served = NON SERVIE à {$addr} : {$error} (zeroclaw doctor dit comment corriger)
cli-status-heartbeat-off = arrêté : {$problem}
cli-status-heartbeat-every = toutes les {$minutes} min sous l'agent {$agent}
cli-status-heartbeat-last = dernier créneau {$status}
cli-status-heartbeat-failures = { $count ->
    [one] ({$count} échec d'affilée)
   *[other] ({$count} échecs d'affilée)
}
cli-status-heartbeat-deadman = alerte d'homme mort levée
cli-status-heartbeat-next = prochain créneau {$at}
cli-heartbeat-problem = battement : arrêté (problème de config : {$problem})
cli-heartbeat-disabled = battement : arrêté ([heartbeat] enabled = false)
cli-heartbeat-on = battement : agent {$agent} toutes les {$minutes} min, prochain créneau {$next}
cli-heartbeat-deadman = alerte d'homme mort levée à {$at}
cli-sop-started = exécution {$run} lancée
cli-sop-show-run = exécution :
cli-sop-show-sop = sop :
cli-sop-show-status = état :
cli-sop-show-trigger = déclencheur :
cli-sop-show-by = par :
cli-sop-show-rev = révision :
cli-sop-show-running = en cours :
cli-sop-show-pending = en attente :
cli-sop-show-started = début :
cli-sop-show-ended = fin :
cli-sop-show-reason = raison :
cli-sop-show-gate = porte :
cli-sop-show-status-value = {$status} (étape {$step} sur {$total})
cli-sop-show-running-value = étape {$step}, essai {$try}, depuis {$since}
cli-sop-show-gate-value = {$kind} à l'étape {$step} — zeroclaw sop approve {$run} (ou deny)

## config --help
cli-config-help =
    Commandes :
      get [PROP]              afficher une valeur (une chaîne telle quelle, le reste en JSON), ou toute la config
      set PROP VALUE          régler une propriété ; VALUE est du JSON quand elle se lit comme du JSON, sinon une chaîne
      set-many PROP=VALUE...  régler plusieurs propriétés en un seul changement atomique (même règle des valeurs)
      list [PREFIX]           afficher « prop = valeur » pour chaque propriété sous PREFIX
      delete PROP             retirer une propriété du fichier (elle revient à sa valeur par défaut), ou toute
                              une entrée de table (agents.NAME, cost.prices."MODEL")
      validate [--file F]     vérifier un fichier de config et afficher chaque problème ; sortie 1 s'il est invalide
      migrate [--dry-run]     réécrire un config.toml d'upstream au schéma v1/v2 en v3 (garde config.toml.bak)
      path                    afficher le chemin de config.toml
      reload                  demander au démon en marche de relire config.toml

    Avec un démon en marche, get/set/set-many/list/delete/reload passent par lui ; sans démon, le fichier est
    modifié directement sous le verrou de l'installation. Les secrets sont toujours masqués. Un fichier
    d'upstream au schéma v1/v2 est lu comme v3 en mémoire ; les écritures sont refusées jusqu'à ce que
    « config migrate » le réécrive.

## completion help
cli-completion-after-compinit = (après compinit)

## other packages' errors the CLI prints (sentinelWords: the sentinel's own English, without its prefix)
cli-err-config-unknown-property = propriété inconnue
cli-err-config-invalid-value = valeur invalide
cli-err-config-invalid-path = chemin de propriété invalide
cli-err-config-not-editable = propriété non modifiable sur place
cli-err-config-no-map-section = pas une section à clés
cli-err-config-invalid-key = clé invalide
cli-err-config-old-schema = config.toml suit un schéma plus ancien
cli-err-config-drifted = config.toml a changé sur le disque
cli-err-backup-invalid-archive = archive invalide
cli-err-backup-daemon-running = un démon tourne sur l'installation cible
cli-err-backup-not-empty = l'installation cible n'est pas vide
cli-err-backup-no-room = l'archive ne tiendrait pas

## what a command did
cli-restore-done = { $count ->
    [one] {$count} fichier restauré (zeroclaw {$version}, {$created}) dans {$path}
   *[other] {$count} fichiers restaurés (zeroclaw {$version}, {$created}) dans {$path}
}
cli-config-set-done = {$prop} réglé
cli-config-deleted = {$prop} supprimé
cli-config-reloaded = rechargée (génération {$generation})
cli-config-warning = avertissement : {$warning}
cli-cron-added = tâche {$id} ajoutée ({$schedule}), prochaine exécution {$next}
cli-cron-removed = tâche {$id} supprimée
cli-memory-forgot = {$key} oublié
cli-sessions-deleted = session {$id} supprimée
cli-skills-edited = {$path} modifié
cli-sop-disabled = désactivée : {$dir} : {$reason}
cli-sop-validate-ok = ok : {$count} SOP, {$warnings} avertissement(s)
cli-stop-done = démon (pid {$pid}) arrêté
cli-costs-summary = aujourd'hui : {$today} $   ce mois : {$month} $   cette exécution du démon : {$run} $

## memory get
cli-memory-key = clé :
cli-memory-category = catégorie :
cli-memory-agent = agent :
cli-memory-created = créé :

## status: the shared storage backend
cli-status-storage = stockage :
cli-status-storage-line = {$backend}, partagé : {$peers} pair(s) vu(s), {$claims} réservation(s) en cours, {$leases} bail/baux détenu(s)
cli-status-peer = pair :      {$host} pid {$pid}, version {$version}, vu {$seen}
cli-status-peer-self = pair :      {$host} pid {$pid}, version {$version}, vu {$seen} (ce démon)
cli-flag-storage-compact-store = ne compacter que cette base : sessions, acp, cron, memory, sop, control_plane, devices
