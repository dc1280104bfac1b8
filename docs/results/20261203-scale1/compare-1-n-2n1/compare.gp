set terminal pngcairo size 960,560 font 'sans,10'
set output 'compare.png'
set title "conduitd users passed and PSS, scale 1, pool 4, all cores shared with the generator"
set xlabel 'configuration (instances x workers each)'
set ylabel 'users passed'
set y2label 'PSS, mean over the hold (MB)'
stats 'compare.dat' using 2 nooutput
set ytics nomirror
set y2tics
set yrange [0:STATS_max * 1.15 + 1]
set y2range [0:*]
set offsets 0.5, 0.5, 0, 0
set grid ytics
set key top left
set boxwidth 0.5
set style fill solid 0.5
plot 'compare.dat' using 0:2:xtic(1) with boxes title 'users passed' axes x1y1, \
     '' using 0:2:2 with labels offset 0,0.7 notitle axes x1y1, \
     '' using 0:3 with linespoints lw 2 pt 7 title 'conduitd PSS' axes x1y2, \
     '' using 0:4 with linespoints lw 2 pt 5 title 'PostgreSQL PSS' axes x1y2
