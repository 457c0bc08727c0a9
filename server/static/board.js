// board.js
