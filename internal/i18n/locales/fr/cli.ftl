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
cli-storage-about = réécrire les bases SQLite sans leurs pages libres (zeroclaw storage compact ; le démon arrêté)
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
