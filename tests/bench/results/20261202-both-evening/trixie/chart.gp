set terminal pngcairo size 1280,720 font 'sans,10'
set termoption noenhanced
set output 'chart.png'
set grid ytics
set key inside top right vertical
set ylabel 'IOPS (median)'
set yrange [0:*]
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics rotate by -30 nomirror
set multiplot layout 1,2 title '4k IOPS by system and NBD connection count (rbdx-cN = N connections; median of rounds)'
$d0 << EOD
fio-rbd 974 714
rbdx-c1-io_uring 445 693
rbdx-c1-callback 658 547
engine-c1 732 589
rbd-nbd-c1 785 591
EOD
set title 'QD1'
plot $d0 using 2:xtic(1) title 'randread-4k-qd1', $d0 using 3 title 'randwrite-4k-qd1'
$d1 << EOD
fio-rbd 10669 8798
rbdx-c1-io_uring 4090 5484
rbdx-c2-io_uring 13269 6828
rbdx-c1-callback 8827 5031
rbdx-c2-callback 9550 5009
engine-c1 9101 3088
engine-c2 6287 3314
engine-c4 8139 3528
rbd-nbd-c1 8494 4438
EOD
set title 'QD>1'
plot $d1 using 2:xtic(1) title 'randread-4k-qd32', $d1 using 3 title 'randwrite-4k-qd32'
unset multiplot
