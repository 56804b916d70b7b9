package backup

const noFollow = 0
