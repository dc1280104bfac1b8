set terminal pngcairo size 1200,640 font 'sans,10'
set output 'capacity.png'
set title "Users passed per configuration (cores, instances x workers, cache)"
set grid ytics
set xtics rotate by -35
set bmargin 8
set ylabel 'users passed'
set yrange [0:*]
set style fill solid 0.7 border -1
set boxwidth 0.6
set offsets 0.5, 0.5, 0, 0
stats 'capacity.dat' using 2 nooutput
set yrange [0:STATS_max * 1.12 + 1]
plot 'capacity.dat' using 0:2:xtic(1) with boxes notitle, \
     '' using 0:2:(sprintf('%d', $2)) with labels offset 0,0.7 notitle
